/**
 * The meta-tools' input fields as a model meets them: a description on every field of the JSON Schemas
 * the server advertises, and every problem of a refused input at once.
 *
 * The descriptions live here rather than as `.describe()` in `schema.ts` because they are advice to a
 * model about this server (where a value comes from, which tool answered it), not part of the contract
 * the library, the corpus and the Rust side share; the schemas stay generated from the zod objects and
 * only gain `description` members.
 */
import type { z } from 'zod';
import type { MetaOp } from '../schema.js';

/** The members every meta-op input has (`common` in schema.ts). */
const COMMON: Readonly<Record<string, string>> = {
  requestId: 'A name for this call, new in this session (letters, digits and . _ : -, e.g. "search-1"); a reused one is refused DUPLICATE_REQUEST_ID.',
  idempotencyKey: 'Optional: a key the authority uses to recognise a retried effect; leave it out unless you retry one.',
  observedRevision: 'Optional: the revision you last observed (observedRevision of an earlier result); an effect on a head that has moved since answers stale.',
};

const CANDIDATE = 'data.candidateId of the model.proposePatch that proposed the candidate (cand:sha256:…).';

/** Per tool, by path: object members joined with `.`, array items under their array's path. */
const FIELDS: Readonly<Record<MetaOp, Readonly<Record<string, string>>>> = {
  'interface.manifest': {},
  'catalog.search': {
    query: 'Words for the change you need (e.g. "set parameter"), matched against capability ids, titles and descriptions; leave it out to list all.',
    effectClass: 'Optional: only capabilities of this effect class (read, bufferable, reversible, irreversible).',
    maxRisk: 'Optional: only capabilities of this risk or lower (low, medium, high, critical).',
    limit: 'Optional: at most this many hits (1-50).',
  },
  'catalog.describe': {
    capability: 'A capability id from data.hits of catalog.search (e.g. "cap:doc.setParameter@1"); only a searched capability can be described.',
  },
  'model.read': {
    select: 'Optional: the paths to read (authority-defined, e.g. "parameters/width"); leave it out for the whole bounded view.',
    query: 'Optional: a model query answered on this read (resolve, impact or lineage of one reference); recorded in the task capsule.',
    'query.kind': 'resolve: what the reference names; impact: what depends on it; lineage: its history.',
    'query.ref': 'The reference to query (authority-defined, e.g. "parameters/width").',
    complete: 'Optional: ask the runtime to end the task completed on this read-back; only where the task leaves completion to the model.',
  },
  'model.proposePatch': {
    plan: 'The plan: described capabilities as steps, bound to the revision, intent and catalogs it was made for (the server instructions give a template).',
    'plan.planId': 'Optional: the content hash of the plan without it; leave it out.',
    'plan.baseRevision': 'The revision the plan is made on: observedRevision of your latest result (the task branch head).',
    'plan.intentFrameHash': "The task's intent hash (intent:sha256:…), given in the server instructions.",
    'plan.bindings': 'What the plan was made against: every value is in the server instructions except discoveryCatalogHash.',
    'plan.bindings.operationCatalog': 'The authority\'s operation catalog (e.g. "aira.doc.ops/1"), given in the server instructions.',
    'plan.bindings.discoveryCatalogHash': "data.catalogHash of the catalog.search that found the steps' capabilities (disc:sha256:…).",
    'plan.bindings.runtimeSnapshot': 'The runtime snapshot (runtime:sha256:…), given in the server instructions.',
    'plan.bindings.grantId': "The task's grant id, given in the server instructions.",
    'plan.steps': 'The steps (1-64), each one described capability with its arguments.',
    'plan.steps.id': 'A name for the step, unique in the plan (e.g. "step-1").',
    'plan.steps.capability': 'A capability id described by catalog.describe in this task.',
    'plan.steps.mode': 'The mode catalog.describe answered for the capability: authoring writes; query, preview and compare read.',
    'plan.steps.dependsOn': 'Optional: ids of steps of this plan that must run before this one.',
    'plan.steps.args': "The capability's arguments, matching the inputSchema catalog.describe answered.",
    'plan.acceptanceAssertions': "Ids of the task's acceptance assertions the plan satisfies (listed in the server instructions).",
    'plan.estimatedEffects': 'Your estimate of the effects: the capability ids of the authoring steps.',
    'plan.estimatedRisk': "The highest risk of the steps' capabilities (low, medium, high, critical); understating it is a warning.",
  },
  'model.preview': { candidateId: CANDIDATE },
  'model.validate': { candidateId: CANDIDATE },
  'model.commit': {
    candidateId: CANDIDATE,
    validationToken: 'data.validationToken of the passing model.validate of this candidate (vtok:sha256:…).',
    target: 'Optional: branch (the default) commits onto the task branch, reversible; publish moves the branch onto the user head, irreversible.',
  },
  'model.revert': {
    toRevision: 'An earlier revision of the task branch (rev:sha256:… from an earlier result) to return to; history is kept.',
  },
};

/** The description of an input field of `op` at `path`, if there is one. */
export function fieldDescription(op: MetaOp, path: string): string | undefined {
  return FIELDS[op][path] ?? (path.includes('.') ? undefined : COMMON[path]);
}

type JsonSchema = Record<string, unknown>;

const isSchema = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Visits every named property of a JSON Schema, depth first: object `properties`, and the items of an
 * array as the array's own path. `visit` may replace the property's schema by returning a new one.
 */
function mapProperties(schema: JsonSchema, visit: (path: string, prop: JsonSchema) => JsonSchema, prefix = ''): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (isSchema(schema['properties'])) {
    const props: JsonSchema = {};
    for (const [k, v] of Object.entries(schema['properties'])) {
      const path = prefix === '' ? k : `${prefix}.${k}`;
      props[k] = isSchema(v) ? mapProperties(visit(path, v), visit, path) : v;
    }
    out['properties'] = props;
  }
  if (isSchema(schema['items'])) out['items'] = mapProperties(schema['items'], visit, prefix);
  return out;
}

/** `schema` (a meta-op's advertised input schema) with a description on each field this module knows. */
export function describeInputSchema(op: MetaOp, schema: JsonSchema): JsonSchema {
  return mapProperties(schema, (path, prop) => {
    const description = fieldDescription(op, path);
    return description === undefined || typeof prop['description'] === 'string' ? prop : { ...prop, description };
  });
}

/** One problem of a refused input: the field's path (`(input)` for the whole) and what is wrong with it. */
export interface InputProblem {
  readonly field: string;
  readonly problem: string;
}

/** The most problems one answer lists; the rest are counted. */
export const MAX_INPUT_PROBLEMS = 20;

/** The problems as lines `<field>: <problem>`, at most MAX_INPUT_PROBLEMS and a count of the rest. */
export function problemLines(problems: readonly InputProblem[]): string[] {
  const lines = problems.slice(0, MAX_INPUT_PROBLEMS).map((p) => `${p.field}: ${p.problem}`);
  if (problems.length > MAX_INPUT_PROBLEMS) lines.push(`… and ${problems.length - MAX_INPUT_PROBLEMS} more`);
  return lines;
}

function at(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/**
 * A path segment as a line may show it: a name the client chose is quoted unless plain, so no key can
 * break the one-line-a-field text or pass for a line of its own.
 */
const segment = (k: PropertyKey): string => {
  const s = String(k);
  return /^[A-Za-z0-9_$-]{1,64}$/.test(s) ? s : JSON.stringify(s.slice(0, 64));
};

/**
 * Every problem zod finds in `input` against `schema`, one per field (problems of one field joined), in
 * the order zod reports them. Empty when the input is valid. Messages are zod's own one-line ones, with
 * the two a model meets most made plain: a missing required field and a field the tool does not have.
 */
export function inputProblems(schema: z.ZodType, input: unknown): InputProblem[] {
  const r = schema.safeParse(input);
  if (r.success) return [];
  const byField = new Map<string, string[]>();
  const add = (field: string, problem: string) => {
    const list = byField.get(field) ?? [];
    if (!list.includes(problem)) list.push(problem);
    byField.set(field, list);
  };
  for (const issue of r.error.issues) {
    const path = issue.path.map(segment).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        add(path === '' ? segment(key) : `${path}.${segment(key)}`, path === '' ? 'not a field of this tool' : `not a field of ${path}`);
      continue;
    }
    const missing = issue.code === 'invalid_type' && issue.path.length > 0 && at(input, issue.path) === undefined;
    add(path === '' ? '(input)' : path, missing ? `missing (required ${issue.expected})` : issue.message.replace(/\s+/g, ' ').slice(0, 200));
  }
  return [...byField].map(([field, problems]) => ({ field, problem: problems.join('; ') }));
}
