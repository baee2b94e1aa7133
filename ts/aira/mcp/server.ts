/**
 * One MCP session over one Aira task: the nine meta-operations as tools (names = op names, M47–M48),
 * the task trace as the resource `aira://task/trace`, and optionally scoped bound tools (M49).
 *
 * Built on the SDK's low-level `Server` rather than `McpServer`: `McpServer` refuses arguments that
 * fail the tool's input schema before the handler runs, so such a call would never reach the runtime,
 * leave no trace event, and answer a transport error where the library answers an `INVALID_INPUT`
 * envelope. Here every call goes to the runtime unparsed; the advertised schemas are still generated
 * from the same zod objects (`OP_INPUTS[op]`, `Envelope`) with the SDK's own converter.
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
import { Bindings, type BindingOptions } from './bindings.js';

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

const DESCRIPTIONS: Record<MetaOp, string> = {
  'interface.manifest': "The authority's manifest: protocol version, operation catalog, validators and limits.",
  'catalog.search': 'Search the capability catalog; concrete operations are data, never tools.',
  'catalog.describe': "One capability's full contract: argument schema, effect class, risk, preconditions.",
  'model.read': 'Read the model at the task branch head (bounded selection); in readBack it may complete the task.',
  'model.proposePatch': 'Propose a plan of described capabilities; answers a candidate or diagnostics.',
  'model.preview': "Preview a candidate's effects and the active assertions on it.",
  'model.validate': 'Validate a candidate; a pass answers the validation token commit needs.',
  'model.commit': 'Commit a validated candidate onto the task branch (or publish the branch, irreversible).',
  'model.revert': 'Revert the task branch to an earlier revision of it (history is kept).',
};

const OUTPUT_SCHEMA = toJsonSchemaCompat(Envelope, { pipeStrategy: 'output' }) as Tool['outputSchema'];

function metaTools(): Tool[] {
  return META_OPS.map((op) => ({
    name: op,
    description: DESCRIPTIONS[op],
    inputSchema: toJsonSchemaCompat(OP_INPUTS[op], { pipeStrategy: 'input' }) as Tool['inputSchema'],
    outputSchema: OUTPUT_SCHEMA,
    annotations: { readOnlyHint: op === 'interface.manifest' || op.startsWith('catalog.') || op === 'model.read' },
  }));
}

/** The one line of text beside the structured envelope, for clients that show only text. */
export function summaryLine(op: string, env: Envelope): string {
  const first = env.diagnostics[0];
  const next = env.nextActions[0]?.op;
  const terminal = env.task.terminal === null ? '' : `, task ${env.task.terminal}`;
  return `${op} ${env.status}${first ? ` ${first.code}` : ''}${next ? ` -> next ${next}` : ''} (state ${env.task.state}${terminal})`;
}

export function toolResult(op: string, env: Envelope): CallToolResult {
  return {
    content: [{ type: 'text', text: summaryLine(op, env) }],
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
  return { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `invalid ${message.method.slice(0, 40)} request: ${where}: ${what}${more}` } };
}

export interface AiraMcpSessionOptions {
  task: McpTask;
  /** Scoped bound tools (M49); absent: none. */
  bindings?: BindingOptions;
  version?: string;
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

export function createAiraMcpSession(opts: AiraMcpSessionOptions): AiraMcpSession {
  const { task } = opts;
  const server = new Server(
    { name: SERVER_NAME, version: opts.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: opts.bindings !== undefined }, resources: {} },
      instructions:
        'One session is one Aira task. Discover with catalog.search and catalog.describe, then proposePatch, preview, validate, commit and read back. Every tool answers one envelope (structuredContent); follow its nextActions.',
    },
  );
  const bindings = opts.bindings === undefined ? undefined : new Bindings(opts.bindings, task);
  const tools = metaTools();
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
        const env = await task.call({ op: name, input: input ?? {} });
        if (bindings && bindings.observe(name as MetaOp, env)) void server.sendToolListChanged().catch(() => undefined);
        return toolResult(name, env);
      }
      const bound = bindings?.find(name);
      if (bound === undefined) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      return toolResult(name, await bound.call(input));
    }),
  );
  const resources: Record<string, { name: string; title: string; description: string; read: () => unknown }> = {
    [TRACE_URI]: { name: 'trace', title: 'The task trace', description: "This session's task trace (M46): every decision, transition and the terminal.", read: () => task.trace() },
    [CAPSULE_URI]: { name: 'capsule', title: 'The task capsule', description: 'The task capsule (M5): intent frame, revision, discovered contracts and the plan bindings to copy.', read: () => task.capsule() },
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
  const end = () => (ended ??= (async () => {
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
