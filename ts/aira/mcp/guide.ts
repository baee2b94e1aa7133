/**
 * What a model reads of a session: the server instructions and the text of each tool result.
 *
 * Many MCP clients hand the model only a result's `content`, never `structuredContent`, and not every
 * client lets the model read resources. So the instructions name the task, its acceptance assertions and
 * every plan binding the server knows, and each result's text says what happened and the next call with
 * every id and token the session has seen filled in; the whole envelope follows as JSON. The runtime
 * still decides everything: these are hints built from its answers, never a second state machine.
 */
import { z } from 'zod';
import type { Envelope, MetaOp } from '../schema.js';
import { MAX_INPUT_PROBLEMS, problemLines, type InputProblem } from './fields.js';

const Item = z.object({ id: z.string(), text: z.string() });

/** The members of the task capsule the guide uses (the capsule is `unknown` to a session). */
const TaskFacts = z.object({
  intentFrame: z.object({
    goal: z.string(),
    hardRequirements: z.array(Item),
    scope: z.array(Item),
    prohibitedEffects: z.array(Item),
    acceptanceAssertions: z.array(z.object({ id: z.string(), text: z.string(), validator: z.string(), args: z.record(z.string(), z.unknown()) })),
  }),
  intentFrameHash: z.string(),
  revision: z.string(),
  runtimeSnapshot: z.string(),
  grant: z.object({ grantId: z.string() }),
  protocol: z.object({ requiredCompletionSequence: z.array(z.string()), completionAuthority: z.enum(['runtime', 'model']) }),
  operationCatalog: z.string().nullable(),
  discoveryCatalogHash: z.string().nullable(),
});
export type TaskFacts = z.infer<typeof TaskFacts>;

/** The facts of a capsule, the session's operation catalog filled in where the capsule has none yet; null if it is not one. */
export function taskFacts(capsule: unknown, operationCatalog: string | null): TaskFacts | null {
  const r = TaskFacts.safeParse(capsule);
  if (!r.success) return null;
  return { ...r.data, operationCatalog: r.data.operationCatalog ?? operationCatalog };
}

const NEW_ID = '<a new requestId>';

/** What one call of a completion step does, as the instructions list it. */
const STEP_TEXT: Readonly<Record<MetaOp, string>> = {
  'interface.manifest': "interface.manifest {}: the authority's validators, limits and data.operationCatalog (the plan binds it).",
  'catalog.search': 'catalog.search {"query": "<words for the change>"}: data.hits lists capability ids; data.catalogHash goes into the plan.',
  'catalog.describe': 'catalog.describe {"capability": "<a hit id>"}: its inputSchema is the shape of a step\'s args; note its mode and risk.',
  'model.read':
    'model.read {}: reads the task branch (add "select": ["<path>"] to narrow it); after a commit it is the read-back the runtime checks the acceptance assertions on.',
  'model.proposePatch': 'model.proposePatch {"plan": PLAN}: answers data.candidateId, or diagnostics saying what to fix (then propose again).',
  'model.preview': 'model.preview {"candidateId": "<data.candidateId>"}: the candidate\'s effects and the active assertions on it.',
  'model.validate': 'model.validate {"candidateId": "<data.candidateId>"}: a pass answers data.validationToken.',
  'model.commit': 'model.commit {"candidateId": "<data.candidateId>", "validationToken": "<data.validationToken>"}: commits onto the task branch.',
  'model.revert': 'model.revert {"toRevision": "<an earlier revision>"}: returns the task branch to it.',
};

/** The plan to propose, every binding the session knows filled in; `<…>` marks what the model decides. */
export function planTemplate(facts: TaskFacts | null, known: { baseRevision?: string } = {}): Record<string, unknown> {
  return {
    baseRevision: known.baseRevision ?? '<observedRevision of your latest result>',
    intentFrameHash: facts?.intentFrameHash ?? '<intentFrameHash of the aira://task/capsule resource>',
    bindings: {
      operationCatalog: facts?.operationCatalog ?? '<data.operationCatalog of interface.manifest>',
      discoveryCatalogHash: facts?.discoveryCatalogHash ?? '<data.catalogHash of catalog.search>',
      runtimeSnapshot: facts?.runtimeSnapshot ?? '<runtimeSnapshot of the aira://task/capsule resource>',
      grantId: facts?.grant.grantId ?? '<grant.grantId of the aira://task/capsule resource>',
    },
    steps: [{ id: 'step-1', capability: '<a described capability id>', mode: '<its mode>', args: '<an object matching its inputSchema>' }],
    acceptanceAssertions: facts?.intentFrame.acceptanceAssertions.map((a) => a.id) ?? ['<the acceptance assertion ids>'],
    estimatedEffects: ['<the capability ids of the authoring steps>'],
    estimatedRisk: "<the highest risk of the steps' capabilities>",
  };
}

const items = (label: string, list: ReadonlyArray<{ text: string }>): string[] =>
  list.length === 0 ? [] : [`${label}: ${list.map((i) => i.text).join('; ')}`];

/**
 * The server instructions: the task, what counts as done, and the calls from nothing to a completed
 * task, in the order the task's protocol requires them. Without facts (a capsule this module cannot
 * read) only the generic course is given.
 */
export function sessionInstructions(facts: TaskFacts | null): string {
  const lines = ['This MCP session is one Aira task: you request meta-operations as tool calls, and the runtime decides what runs and when the task is done.'];
  if (facts !== null) {
    const f = facts.intentFrame;
    lines.push('', `Task: ${f.goal}`, ...items('Must', f.hardRequirements), ...items('Must not', f.prohibitedEffects), ...items('Scope', f.scope));
    if (f.acceptanceAssertions.length > 0) {
      lines.push('Accepted when (the runtime checks these on the read-back after the commit; list their ids in plan.acceptanceAssertions):');
      for (const a of f.acceptanceAssertions) lines.push(`- ${a.id}: ${a.text} (validator ${a.validator} ${JSON.stringify(a.args)})`);
    }
  }
  const sequence = (
    facts?.protocol.requiredCompletionSequence ?? [
      'catalog.search',
      'catalog.describe',
      'model.proposePatch',
      'model.preview',
      'model.validate',
      'model.commit',
      'model.read',
    ]
  ).filter((op): op is MetaOp => Object.prototype.hasOwnProperty.call(STEP_TEXT, op));
  // Without a known operation catalog the plan cannot be bound until the manifest was read: say so first.
  if ((facts?.operationCatalog ?? null) === null && !sequence.includes('interface.manifest')) sequence.unshift('interface.manifest');
  lines.push('', 'How to finish: every call takes a "requestId" you have not used before in this session (e.g. "search-1"); call the tools in this order:');
  sequence.forEach((op, i) => lines.push(`${i + 1}. ${STEP_TEXT[op]}`));
  if (facts?.protocol.completionAuthority === 'model')
    lines.push('This task leaves completion to you: pass "complete": true to the model.read that reads back your commit.');
  lines.push(`PLAN = ${JSON.stringify(planTemplate(facts))}`);
  lines.push(
    '',
    'Each result is text: first what happened, then lines "next: <tool> <arguments>" with the next call the runtime admits (ids and tokens filled in), then the whole result as JSON (status, data, diagnostics, nextActions, task).',
    'A blocked result took no effect: fix what it says and call again with a new requestId. Stop once the result\'s task.terminal is set ("completed" is success).',
  );
  return lines.join('\n');
}

/** What a session remembers of its answers to fill in the next call: the latest candidate and its token. */
export class Recall {
  candidateId: string | null = null;
  validationToken: string | null = null;

  /** Learns from the answer to `op` (the meta-op it ran as: a bound tool runs as model.proposePatch). */
  observe(op: MetaOp, env: Envelope): void {
    if (env.status !== 'success') return;
    const { candidateId, validationToken } = env.data;
    if (op === 'model.proposePatch' && typeof candidateId === 'string') {
      this.candidateId = candidateId;
      this.validationToken = null;
    }
    if (op === 'model.validate' && typeof validationToken === 'string') this.validationToken = validationToken;
  }
}

/** The arguments of the next call `op` (the task now in `state`), with what the session knows filled in. */
function nextArgs(op: MetaOp, capability: string | undefined, state: string, facts: TaskFacts | null, recall: Recall): Record<string, unknown> {
  const args: Record<string, unknown> = { requestId: NEW_ID };
  const candidateId = recall.candidateId ?? '<data.candidateId of model.proposePatch>';
  switch (op) {
    case 'interface.manifest':
      break;
    case 'catalog.search':
      args['query'] = '<words for the change you need>';
      break;
    case 'catalog.describe':
      args['capability'] = capability ?? '<a capability id from data.hits of catalog.search>';
      break;
    case 'model.read':
      // Only the read-back of a commit can complete; where the task leaves that to the model, it must ask.
      if (facts?.protocol.completionAuthority === 'model' && (state === 'commit' || state === 'readBack')) args['complete'] = true;
      break;
    case 'model.proposePatch':
      args['plan'] = planTemplate(facts, facts === null ? {} : { baseRevision: facts.revision });
      break;
    case 'model.preview':
    case 'model.validate':
      args['candidateId'] = candidateId;
      break;
    case 'model.commit':
      args['candidateId'] = candidateId;
      args['validationToken'] = recall.validationToken ?? '<data.validationToken of model.validate>';
      break;
    case 'model.revert':
      args['toRevision'] = '<an earlier revision of the task branch>';
      break;
  }
  return args;
}

const MAX_DIAGNOSTIC_LINES = 8;

/**
 * The lines between a result's summary and its JSON: the input problems (all of them), the
 * diagnostics, and the next calls the runtime admits with their arguments, or that the task ended.
 * `facts` is read only when a plan is to be proposed or the model read next.
 */
export function resultLines(tool: string, env: Envelope, problems: readonly InputProblem[], facts: () => TaskFacts | null, recall: Recall): string[] {
  const lines: string[] = [];
  if (problems.length > 0) {
    lines.push(`The input has ${problems.length} invalid field${problems.length === 1 ? '' : 's'}:`, ...problemLines(problems).map((l) => `- ${l}`));
  } else {
    // One line each: an authority's message or affected name never breaks a line (the JSON has them whole).
    for (const d of env.diagnostics.slice(0, MAX_DIAGNOSTIC_LINES)) {
      const affected = d.affected.length > 0 ? ` (${d.affected.slice(0, 4).join(', ')})` : '';
      lines.push(`- ${d.code}${affected}: ${d.message}`.replace(/\s+/g, ' '));
    }
    if (env.diagnostics.length > MAX_DIAGNOSTIC_LINES) lines.push(`… and ${env.diagnostics.length - MAX_DIAGNOSTIC_LINES} more diagnostics`);
  }
  if (env.task.terminal !== null) {
    lines.push(`done: the task ended ${env.task.terminal}; no further call is admitted.`);
    return lines;
  }
  // The capsule is built at most once a result, and only for a next call that needs it.
  let known: TaskFacts | null | undefined;
  const factsOnce = (): TaskFacts | null => (known === undefined ? (known = facts()) : known);
  const seen = new Set<string>();
  for (const a of env.nextActions) {
    const key = `${a.op} ${a.capability ?? ''}`;
    if (seen.has(key) || seen.size >= 3) continue;
    seen.add(key);
    const needsFacts = a.op === 'model.proposePatch' || a.op === 'model.read';
    lines.push(`next: ${a.op} ${JSON.stringify(nextArgs(a.op, a.capability, env.task.state, needsFacts ? factsOnce() : null, recall))}`);
  }
  if (seen.size === 0 && env.status !== 'success')
    lines.push(`next: fix ${problems.length > 0 ? 'the fields above' : 'what the diagnostics say'} and call ${tool} again with a new requestId.`);
  return lines;
}

/**
 * The envelope with its INVALID_INPUT diagnostic naming every invalid field, not only the first: in its
 * message, and as paths in `repairScope` (where plan diagnostics name what to repair too).
 */
export function withInputProblems(tool: string, env: Envelope, problems: readonly InputProblem[]): Envelope {
  const first = env.diagnostics[0];
  if (problems.length === 0 || first?.code !== 'INVALID_INPUT') return env;
  const message = `${tool} input invalid at ${problems.length} field${problems.length === 1 ? '' : 's'}: ${problemLines(problems).join('; ')}`;
  const diagnostic = {
    ...first,
    repairScope: problems.slice(0, MAX_INPUT_PROBLEMS).map((p) => p.field),
    message: message.length > 1000 ? `${message.slice(0, 999)}…` : message,
  };
  return { ...env, diagnostics: [diagnostic, ...env.diagnostics.slice(1)] };
}
