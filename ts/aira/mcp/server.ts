/**
 * One MCP session over one Aira task: the nine meta-operations as tools (names = op names, M47–M48),
 * the task trace as the resource `aira://task/trace`, and optionally scoped bound tools (M49).
 *
 * Built on the SDK's low-level `Server` rather than `McpServer`: `McpServer` refuses arguments that
 * fail the tool's input schema before the handler runs, so such a call would never reach the runtime,
 * leave no trace event, and answer a transport error where the library answers an `INVALID_INPUT`
 * envelope. Here every call goes to the runtime unparsed; the advertised schemas are still generated
 * from the same zod objects (`OP_INPUTS[op]`, `Envelope`) with the SDK's own converter, and gain only
 * field descriptions (`fields.ts`). A result's text carries what its structured content does, and the
 * instructions lead from nothing to a completed task (`guide.ts`): many clients show a model nothing else.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { Envelope, META_OPS, OP_INPUTS, type MetaOp, type RuntimeState, type TerminalRecord, type Trace } from '../schema.js';
import { BoundInput, Bindings, type BindingOptions } from './bindings.js';
import { describeInputSchema, inputProblems, type InputProblem } from './fields.js';
import { Recall, resultLines, sessionInstructions, taskFacts, withInputProblems, type TaskFacts } from './guide.js';

/** What a session needs of a task (the runtime's `AiraTask` satisfies it). */
export interface McpTask {
  readonly taskId: string;
  readonly state: RuntimeState;
  readonly terminal: TerminalRecord | null;
  call(call: unknown): Promise<Envelope>;
  cancel(reason: string): TerminalRecord;
  trace(): Trace;
  /** The task capsule (M5): what a client copies into a plan's bindings. */
  capsule(): unknown;
}

export const TRACE_URI = 'aira://task/trace';
export const CAPSULE_URI = 'aira://task/capsule';
export const SERVER_NAME = 'aigenora-aira';

// Each says what to pass and what comes back, so a model can chain the tools from the descriptions alone.
const DESCRIPTIONS: Record<MetaOp, string> = {
  'interface.manifest':
    "The authority's manifest: protocol version, operation catalog, validators and limits. Optional: the server instructions already give the operation catalog.",
  'catalog.search':
    'Search the capability catalog (concrete operations are data, never tools). Answers data.hits (capability ids) and data.catalogHash, which a plan binds.',
  'catalog.describe': "One searched capability's full contract: the inputSchema of a step's args, effect class, risk, mode, preconditions.",
  'model.read': 'Read the model at the task branch head (bounded selection). The read after a commit is the read-back that completes the task.',
  'model.proposePatch':
    'Propose a plan of described capabilities (template in the server instructions). Answers data.candidateId, or diagnostics saying what to fix.',
  'model.preview': "Preview a candidate's effects and the active assertions on it. Takes data.candidateId of model.proposePatch.",
  'model.validate': 'Validate a candidate. A pass answers data.validationToken, which model.commit needs.',
  'model.commit': 'Commit a validated candidate onto the task branch (or publish the branch, irreversible). Takes candidateId and validationToken.',
  'model.revert': 'Revert the task branch to an earlier revision of it (history is kept).',
};

const OUTPUT_SCHEMA = toJsonSchemaCompat(Envelope, { pipeStrategy: 'output' }) as Tool['outputSchema'];

function metaTools(): Tool[] {
  return META_OPS.map((op) => ({
    name: op,
    description: DESCRIPTIONS[op],
    inputSchema: describeInputSchema(op, toJsonSchemaCompat(OP_INPUTS[op], { pipeStrategy: 'input' }) as Record<string, unknown>) as Tool['inputSchema'],
    outputSchema: OUTPUT_SCHEMA,
    annotations: { readOnlyHint: op === 'interface.manifest' || op.startsWith('catalog.') || op === 'model.read' },
  }));
}

/** The first line of a result's text: the op, status, first diagnostic, next op and task state. */
export function summaryLine(op: string, env: Envelope): string {
  const first = env.diagnostics[0];
  const next = env.nextActions[0]?.op;
  const terminal = env.task.terminal === null ? '' : `, task ${env.task.terminal}`;
  return `${op} ${env.status}${first ? ` ${first.code}` : ''}${next ? ` -> next ${next}` : ''} (state ${env.task.state}${terminal})`;
}

/**
 * A tool result. Many clients give the model only `content`, so the text carries everything: the
 * summary line and `lines` (problems, diagnostics, the next call), then, as the SDK's convention for
 * structured results has it, the envelope serialized as JSON in a text block of its own.
 */
export function toolResult(op: string, env: Envelope, lines: readonly string[] = []): CallToolResult {
  return {
    content: [
      { type: 'text', text: [summaryLine(op, env), ...lines].join('\n') },
      { type: 'text', text: JSON.stringify(env) },
    ],
    structuredContent: env as unknown as Record<string, unknown>,
    // The call took no effect: hosts that only look at isError still see that.
    isError: env.status === 'blocked' || env.status === 'failed',
  };
}

/** The request schemas the SDK checks a request against before any handler of ours runs. */
const REQUEST_SCHEMAS = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/**
 * The answer to a request whose params the SDK would refuse, or undefined. The SDK's own refusal is an
 * InternalError whose message is zod's issue list, pretty-printed over many lines; this is InvalidParams
 * and one line naming the first issue: `invalid tools/call request: params.arguments: Invalid input: …`.
 */
export function paramsRefusal(message: JSONRPCMessage): JSONRPCErrorResponse | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const checked = REQUEST_SCHEMAS.get(message.method)?.safeParse(message);
  if (checked === undefined || checked.success) return undefined;
  const [first, ...rest] = checked.error.issues;
  const where = first?.path.map(String).join('.') || 'params';
  const what = (first?.message ?? 'invalid').replace(/\s+/g, ' ').slice(0, 200);
  const more = rest.length > 0 ? ` (and ${rest.length} more)` : '';
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: { code: ErrorCode.InvalidParams, message: `invalid ${message.method.slice(0, 40)} request: ${where}: ${what}${more}` },
  };
}

export interface AiraMcpSessionOptions {
  task: McpTask;
  /** Scoped bound tools (M49); absent: none. */
  bindings?: BindingOptions;
  version?: string;
  /**
   * The authority's operation catalog, when known before the task read its manifest (`openTaskSession`
   * reads it): the capsule resource, the instructions and the next-call hints carry it from the start,
   * so a plan can be bound without calling interface.manifest first.
   */
  operationCatalog?: string | null;
  /** Called once when the session ends (after an unfinished task is cancelled). */
  release?: () => Promise<void>;
}

export interface AiraMcpSession {
  readonly server: Server;
  readonly task: McpTask;
  /** Connects the server to a transport; requests with params the SDK would refuse are answered in one line (`paramsRefusal`). */
  connect(transport: Transport): Promise<void>;
  /** Ends the session: an unfinished task is cancelled. */
  close(): Promise<void>;
}

export const SESSION_CLOSED_REASON = 'the MCP session closed';

/** Cancels the task unless it already ended; safe to call more than once. */
function cancelUnfinished(task: McpTask): void {
  if (task.terminal === null) task.cancel(SESSION_CLOSED_REASON);
}

/**
 * The capsule as the session serves it: until the task has read the manifest its `operationCatalog` is
 * null, and the session's own (read when it opened) stands in, so a plan never waits on interface.manifest.
 */
function sessionCapsule(task: McpTask, catalog: string | null): unknown {
  const c = task.capsule();
  if (catalog === null || c === null || typeof c !== 'object' || !('operationCatalog' in c) || c.operationCatalog !== null) return c;
  return { ...c, operationCatalog: catalog };
}

export function createAiraMcpSession(opts: AiraMcpSessionOptions): AiraMcpSession {
  const { task } = opts;
  const catalog = opts.operationCatalog ?? null;
  // The guide only reads the capsule; one it cannot read leaves the hints generic, never fails a call.
  const facts = (): TaskFacts | null => {
    try {
      return taskFacts(task.capsule(), catalog);
    } catch {
      return null;
    }
  };
  const server = new Server(
    { name: SERVER_NAME, version: opts.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: opts.bindings !== undefined }, resources: {} },
      instructions: sessionInstructions(facts()),
    },
  );
  const bindings = opts.bindings === undefined ? undefined : new Bindings(opts.bindings, task);
  const tools = metaTools();
  const recall = new Recall();
  /**
   * The result of tool `tool` that ran as `op`. The runtime names only the first problem of a refused
   * input; the input is parsed again here (only then) so one answer names every invalid field.
   */
  const answer = (tool: string, op: MetaOp, raw: Envelope, problemsOf: () => InputProblem[]): CallToolResult => {
    const problems = raw.diagnostics[0]?.code === 'INVALID_INPUT' ? problemsOf() : [];
    const env = withInputProblems(tool, raw, problems);
    recall.observe(op, env);
    return toolResult(tool, env, resultLines(tool, env, problems, facts, recall));
  };
  // Calls of one session run one at a time, so the trace order is the order the client sent them.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const run = queue.then(f, f);
    queue = run.catch(() => undefined);
    return run;
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools, ...(bindings?.tools() ?? [])] }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    serial(async () => {
      const { name, arguments: input } = request.params;
      if ((META_OPS as readonly string[]).includes(name)) {
        const op = name as MetaOp;
        const env = await task.call({ op, input: input ?? {} });
        if (bindings && bindings.observe(op, env)) void server.sendToolListChanged().catch(() => undefined);
        return answer(name, op, env, () => inputProblems(OP_INPUTS[op], input ?? {}));
      }
      const bound = bindings?.find(name);
      if (bound === undefined) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      return answer(name, 'model.proposePatch', await bound.call(input), () => inputProblems(BoundInput, input));
    }),
  );
  const resources: Record<string, { name: string; title: string; description: string; read: () => unknown }> = {
    [TRACE_URI]: {
      name: 'trace',
      title: 'The task trace',
      description: "This session's task trace (M46): every decision, transition and the terminal.",
      read: () => task.trace(),
    },
    [CAPSULE_URI]: {
      name: 'capsule',
      title: 'The task capsule',
      description: 'The task capsule (M5): intent frame, revision, discovered contracts and the plan bindings to copy.',
      read: () => sessionCapsule(task, catalog),
    },
  };
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: Object.entries(resources).map(([uri, r]) => ({ uri, name: r.name, title: r.title, description: r.description, mimeType: 'application/json' })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    const r = Object.prototype.hasOwnProperty.call(resources, uri) ? resources[uri] : undefined;
    if (r === undefined) throw new McpError(ErrorCode.InvalidParams, `Resource ${uri.slice(0, 200)} not found`);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(r.read()) }] };
  });
  let ended: Promise<void> | undefined;
  const end = () =>
    (ended ??= (async () => {
      cancelUnfinished(task);
      await opts.release?.();
    })());
  server.onclose = () => void end().catch(() => undefined);
  return {
    server,
    task,
    async connect(transport) {
      await server.connect(transport);
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const refused = paramsRefusal(message);
        if (refused === undefined) return deliver?.(message, extra);
        void transport.send(refused, { relatedRequestId: refused.id }).catch(() => undefined);
      };
    },
    async close() {
      await end();
      await server.close();
    },
  };
}
