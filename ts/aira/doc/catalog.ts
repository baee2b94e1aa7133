/**
 * The document authority's operation catalog `aira.doc.ops/1`: capabilities are data returned by
 * catalog.search/describe (M47), each with a closed JSON Schema 2020-12 for its step `args`. Authoring
 * capabilities lower to one patch operation each; `cap:doc.inspect@1` is a query step and lowers to none.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { CapabilityContract } from '../authority.js';
import type { EffectClass, Risk } from '../schema.js';
import { ASSERTION_ID_PATTERN, LIMITS, NAME_PATTERN, RESERVED_NAMES } from './model.js';
import { ajv, VALIDATORS } from './validators.js';

export const OPERATION_CATALOG = 'aira.doc.ops/1';

const name = { type: 'string', pattern: NAME_PATTERN, not: { enum: [...RESERVED_NAMES] } };
const value = { oneOf: [{ type: 'number' }, { type: 'string', maxLength: LIMITS.stringValue }, { type: 'boolean' }] };
const closed = (required: string[], properties: Record<string, unknown>): Record<string, unknown> => ({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});

function cap(
  short: string,
  title: string,
  description: string,
  risk: Risk,
  mode: 'query' | 'authoring',
  inputSchema: Record<string, unknown>,
  preconditions: string[],
): CapabilityContract {
  const effectClass: EffectClass = mode === 'query' ? 'read' : 'reversible';
  return { id: `cap:doc.${short}@1`, title, effectClass, risk, description, inputSchema, mode, reversible: true, preconditions };
}

export const DOC_CAPABILITIES: readonly CapabilityContract[] = [
  cap(
    'setParameter',
    'Set a parameter value',
    'Change the value of an existing parameter; the new value must have the type of the old one.',
    'low',
    'authoring',
    closed(['name', 'value'], { name, value }),
    ['parameter exists', 'value has the parameter type'],
  ),
  cap(
    'addParameter',
    'Add a parameter',
    'Add a new named parameter with a value and an optional unit.',
    'low',
    'authoring',
    closed(['name', 'value'], { name, value, unit: { type: 'string', minLength: 1, maxLength: LIMITS.unit } }),
    ['no parameter of that name exists'],
  ),
  cap(
    'removeParameter',
    'Remove a parameter',
    'Remove a parameter; assertions that name it will fail at preview.',
    'medium',
    'authoring',
    closed(['name'], { name }),
    ['parameter exists'],
  ),
  cap(
    'addAssertion',
    'Add an active assertion',
    `Add an assertion checked at every preview and validation; validator one of ${VALIDATORS.join(', ')}.`,
    'low',
    'authoring',
    closed(['id', 'validator', 'args'], {
      id: { type: 'string', pattern: ASSERTION_ID_PATTERN },
      validator: { enum: [...VALIDATORS] },
      args: { type: 'object' },
    }),
    ['no assertion of that id exists', 'args fit the validator'],
  ),
  cap(
    'removeAssertion',
    'Remove an active assertion',
    'Remove an active assertion: the document is no longer checked against it.',
    'high',
    'authoring',
    closed(['id'], { id: { type: 'string', pattern: ASSERTION_ID_PATTERN } }),
    ['assertion exists'],
  ),
  cap(
    'inspect',
    'Inspect the document',
    'Query step: name the parameters or assertions a plan reads (paths like parameters/width); lowers to no change.',
    'low',
    'query',
    closed(['select'], { select: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 200 } } }),
    [],
  ),
];

const byId = new Map(DOC_CAPABILITIES.map((c) => [c.id, c]));
const argCheckers = new Map<string, ValidateFunction>(DOC_CAPABILITIES.map((c) => [c.id, ajv.compile(c.inputSchema)]));

export function capability(id: string): CapabilityContract | undefined {
  return byId.get(id);
}

/** `null` if `args` fit the capability's schema, else the first failure as text. */
export function checkArgs(id: string, args: unknown): string | null {
  const fn = argCheckers.get(id);
  if (fn === undefined) return 'unknown capability';
  if (!fn(args)) {
    const e = fn.errors?.[0];
    return `args${e?.instancePath ?? ''}: ${e?.message ?? 'invalid'}`;
  }
  return notJsonSafe(args);
}

const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * What canonical JSON (and so a content id) cannot carry although a schema passes it: NaN and
 * ±Infinity, and strings with a lone surrogate. Three levels: a step's args, an assertion's args or
 * the select list within them, their members.
 */
export function notJsonSafe(v: unknown, depth = 3): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? null : 'args: numbers must be finite';
  if (typeof v === 'string') return LONE_SURROGATE.test(v) ? 'args: strings must be well-formed Unicode' : null;
  if (depth === 0 || v === null || typeof v !== 'object') return null;
  for (const x of Object.values(v)) {
    const bad = notJsonSafe(x, depth - 1);
    if (bad !== null) return bad;
  }
  return null;
}

const RISK_ORDER: readonly Risk[] = ['low', 'medium', 'high', 'critical'];

/**
 * Capabilities matching the filters and at least one word of `query` (id, title or description), the
 * ones matching more words first, then in catalog order. No query: every capability that passes the filters.
 */
export function searchCatalog(q: {
  query?: string | undefined;
  effectClass?: EffectClass | undefined;
  maxRisk?: Risk | undefined;
  limit?: number | undefined;
}): CapabilityContract[] {
  const words = [
    ...new Set(
      (q.query ?? '')
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter((w) => w.length > 0),
    ),
  ];
  const scored: Array<{ c: CapabilityContract; score: number; i: number }> = [];
  DOC_CAPABILITIES.forEach((c, i) => {
    if (q.effectClass !== undefined && c.effectClass !== q.effectClass) return;
    if (q.maxRisk !== undefined && RISK_ORDER.indexOf(c.risk) > RISK_ORDER.indexOf(q.maxRisk)) return;
    const text = `${c.id} ${c.title} ${c.description}`.toLowerCase();
    const score = words.filter((w) => text.includes(w)).length;
    if (words.length > 0 && score === 0) return;
    scored.push({ c, score, i });
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  return scored.slice(0, q.limit ?? 10).map((s) => s.c);
}
