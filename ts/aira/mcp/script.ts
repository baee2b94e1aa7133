/**
 * Scripted tasks: a list of meta-op calls run one after another against any executor (the library task,
 * an MCP client over stdio or HTTP), so the same script gives comparable traces on every path.
 *
 * Ids a script cannot know in advance (a candidate id, a validation token, the catalog hash) are named by
 * references: a string that is exactly `${<requestId>.<path>}` is replaced by that member of the envelope
 * answered to the earlier call with that requestId, and `${capsule.<path>}` by a member of the task
 * capsule. Nothing else in a script is interpreted.
 */
import { z } from 'zod';
import type { Envelope } from '../schema.js';

export const MAX_SCRIPT_STEPS = 1000;

export const ScriptStep = z.strictObject({ op: z.string().max(100), input: z.unknown() });
export type ScriptStep = z.infer<typeof ScriptStep>;
export const Script = z.array(ScriptStep).min(1).max(MAX_SCRIPT_STEPS);

export class ScriptError extends Error {
  override readonly name = 'ScriptError';
  constructor(
    readonly code: 'SCRIPT_INVALID' | 'SCRIPT_REF_UNRESOLVED',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const REF = /^\$\{([A-Za-z0-9._:-]+)\}$/;

function lookup(root: unknown, path: readonly string[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** `value` with every reference replaced; an unknown reference is an error, never left as text. */
export function resolveRefs(value: unknown, answers: ReadonlyMap<string, Envelope>, capsule: () => unknown): unknown {
  if (typeof value === 'string') {
    const m = REF.exec(value);
    if (m === null) return value;
    const ref = m[1]!;
    if (ref.startsWith('capsule.')) {
      const v = lookup(capsule(), ref.slice('capsule.'.length).split('.'));
      if (v === undefined) throw new ScriptError('SCRIPT_REF_UNRESOLVED', `${value}: the capsule has no such member`);
      return v;
    }
    // Request ids may contain dots: the longest answered id that prefixes the reference wins.
    const ids = [...answers.keys()].filter((id) => ref.startsWith(`${id}.`)).sort((a, b) => b.length - a.length);
    for (const id of ids) {
      const v = lookup(answers.get(id), ref.slice(id.length + 1).split('.'));
      if (v !== undefined) return v;
    }
    throw new ScriptError('SCRIPT_REF_UNRESOLVED', `${value}: no earlier answer has that member`);
  }
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, answers, capsule));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveRefs(v, answers, capsule);
    return out;
  }
  return value;
}

export function parseScript(value: unknown): ScriptStep[] {
  const r = Script.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ScriptError(
      'SCRIPT_INVALID',
      `a script is a JSON array of 1..${MAX_SCRIPT_STEPS} {"op", "input"} calls (${issue ? `${issue.path.join('.') || 'top'}: ${issue.message}` : 'invalid'})`,
    );
  }
  return r.data;
}

export interface ScriptRun {
  readonly calls: Array<{ op: string; input: unknown; envelope: Envelope }>;
}

/**
 * Runs the steps in order. It stops after a call that left the task terminal, so a script written for
 * success does not pile `TASK_TERMINAL` refusals onto a task that ended early.
 */
export async function runScript(
  steps: readonly ScriptStep[],
  exec: (op: string, input: unknown) => Promise<Envelope>,
  capsule: () => unknown | Promise<unknown>,
): Promise<ScriptRun> {
  const answers = new Map<string, Envelope>();
  const calls: ScriptRun['calls'] = [];
  for (const step of steps) {
    const now = JSON.stringify(step.input).includes('${capsule.') ? await capsule() : undefined;
    const input = resolveRefs(step.input, answers, () => now);
    const envelope = await exec(step.op, input);
    calls.push({ op: step.op, input, envelope });
    if (envelope.requestId !== '' && !answers.has(envelope.requestId)) answers.set(envelope.requestId, envelope);
    if (envelope.task.terminal !== null) break;
  }
  return { calls };
}

/**
 * The demo task's script on the built-in document authority: read the manifest (the plan binds its
 * operation catalog), discover `cap:doc.setParameter@1`, set the bracket's width to 45, preview, validate,
 * commit on the task branch and read it back (which completes).
 */
export function bracketScript(): ScriptStep[] {
  return [
    { op: 'interface.manifest', input: { requestId: 'manifest-1' } },
    { op: 'catalog.search', input: { requestId: 'search-1', query: 'set parameter' } },
    { op: 'catalog.describe', input: { requestId: 'describe-1', capability: 'cap:doc.setParameter@1' } },
    {
      op: 'model.proposePatch',
      input: {
        requestId: 'propose-1',
        plan: {
          baseRevision: '${describe-1.observedRevision}',
          intentFrameHash: '${capsule.intentFrameHash}',
          bindings: {
            operationCatalog: '${capsule.operationCatalog}',
            discoveryCatalogHash: '${search-1.data.catalogHash}',
            runtimeSnapshot: '${capsule.runtimeSnapshot}',
            grantId: '${capsule.grant.grantId}',
          },
          steps: [{ id: 'widen', capability: 'cap:doc.setParameter@1', mode: 'authoring', args: { name: 'width', value: 45 } }],
          acceptanceAssertions: ['width-45'],
          estimatedEffects: ['cap:doc.setParameter@1'],
          estimatedRisk: 'low',
        },
      },
    },
    { op: 'model.preview', input: { requestId: 'preview-1', candidateId: '${propose-1.data.candidateId}' } },
    { op: 'model.validate', input: { requestId: 'validate-1', candidateId: '${propose-1.data.candidateId}' } },
    {
      op: 'model.commit',
      input: { requestId: 'commit-1', candidateId: '${propose-1.data.candidateId}', validationToken: '${validate-1.data.validationToken}' },
    },
    { op: 'model.read', input: { requestId: 'read-1', select: ['parameters/width'] } },
  ];
}
