/**
 * The harbor's capability catalog: one entry per action type, with closed JSON Schema 2020-12 documents
 * for input, output and effect attributes. The mix is deliberate, so the demo and the tests meet every
 * kind of capability: atomic and macro, immediate, queued and long-running, cancellable and not, and
 * effects the reference's default (guarded) policy allows, asks to confirm, and denies.
 */
import { canonicalGoJson, RawJson } from '../../crypto/gojson.js';
import { newSchema } from '../schema.js';
import type { CancellationMode, CapabilityKind, CapabilitySpec, ExecutionMode, RiskLevel, Schema } from '../types.js';
import { SCHEMA_DIALECT } from '../types.js';

export const HARBOR_VERSION = '1.0.0';

export const CAPABILITY = {
  inspect: 'harbor.inspect',
  load: 'harbor.load-cargo',
  sail: 'harbor.sail',
  repair: 'harbor.repair',
  shift: 'harbor.shift',
  tow: 'harbor.tow',
  scuttle: 'harbor.scuttle',
} as const;
export type HarborCapability = (typeof CAPABILITY)[keyof typeof CAPABILITY];

export const EFFECT_KINDS = ['harbor.cargo', 'harbor.plan', 'harbor.repair', 'harbor.survey', 'harbor.tow', 'harbor.vessel', 'harbor.voyage'];
export const EFFECT_SCOPES = ['harbor.public', 'harbor.slipway'];

/**
 * The gameplay policy the harbor is meant to run under, in the reference daemon's JSON format: its guarded
 * default profile, told the harbor's effect kinds and scopes (guarded denies every effect it does not know).
 * Under it inspect, load-cargo, sail and shift are allowed, repair asks for confirmation, tow and scuttle
 * are denied. `aigenora rin serve --policy harbor` uses it.
 */
export function harborPolicy(): string {
  return JSON.stringify({
    revision: 1,
    profile: 'guarded',
    known_effect_kinds: EFFECT_KINDS,
    known_scopes: EFFECT_SCOPES,
    confirmation_ttl: { event: 16, step: 600, realtime: 30_000 },
    confirmation_scopes: ['rin.policy.confirm'],
  });
}

/** A JSON value written canonically (Go encoding/json form), ready to travel as a raw sub-document. */
export function raw(value: unknown): RawJson {
  return new RawJson(canonicalGoJson(JSON.stringify(value)));
}

type Properties = Record<string, Record<string, unknown>>;

function closedSchema(properties: Properties, required: string[] = Object.keys(properties)): Schema {
  return newSchema(
    JSON.stringify({
      $schema: SCHEMA_DIALECT,
      type: 'object',
      additionalProperties: false,
      properties,
      ...(required.length > 0 ? { required } : {}),
    }),
  );
}

const count = (maximum: number, minimum = 0): Record<string, unknown> => ({ type: 'integer', minimum, maximum });
const BERTH = { type: 'string', enum: ['dock', 'sea', 'slipway', 'sunk'] };

interface Entry {
  id: HarborCapability;
  description: string;
  input: Properties;
  output: Properties;
  effect: Properties;
  kind: CapabilityKind;
  execution: ExecutionMode;
  cancellation: CancellationMode;
  risk: RiskLevel;
  budget: number;
}

const ENTRIES: Entry[] = [
  {
    id: CAPABILITY.inspect,
    description: "Survey the actor's own boat and the dock.",
    input: {},
    output: { berth: BERTH, cargo: count(1000), hull: count(100), crates_on_dock: count(100000) },
    effect: {},
    kind: 'atomic',
    execution: 'immediate',
    cancellation: 'unsupported',
    risk: 'low',
    budget: 30,
  },
  {
    id: CAPABILITY.load,
    description: "Move crates from the dock into the actor's boat.",
    input: { crates: count(20, 1) },
    output: { cargo: count(1000), crates_on_dock: count(100000) },
    effect: { crates_on_dock: count(100000) },
    kind: 'atomic',
    execution: 'immediate',
    cancellation: 'unsupported',
    risk: 'low',
    budget: 30,
  },
  {
    id: CAPABILITY.sail,
    description: 'Sail a round trip of the given length; one mile per world step.',
    input: { distance: count(50, 1) },
    output: { miles_sailed: count(50), total_miles: count(1000000) },
    effect: { distance: count(50, 1) },
    kind: 'atomic',
    execution: 'long-running',
    cancellation: 'cooperative',
    risk: 'low',
    budget: 120,
  },
  {
    id: CAPABILITY.repair,
    description: "Queue the actor's boat for the shared slipway and repair its hull.",
    input: {},
    output: { hull: count(100) },
    effect: { hull: count(100) },
    kind: 'atomic',
    execution: 'queued',
    cancellation: 'cooperative',
    risk: 'moderate',
    budget: 60,
  },
  {
    id: CAPABILITY.shift,
    description: 'Run a work shift of the given number of steps; the controller submits its tasks as child operations.',
    input: { steps: count(20, 1) },
    output: { steps: count(20, 1) },
    effect: { steps: count(20, 1) },
    kind: 'macro',
    execution: 'long-running',
    cancellation: 'cooperative',
    risk: 'low',
    budget: 60,
  },
  {
    id: CAPABILITY.tow,
    description: "Tow another actor's boat back to the dock.",
    input: {},
    output: { towed: { type: 'string' } },
    effect: {},
    kind: 'atomic',
    execution: 'immediate',
    cancellation: 'unsupported',
    risk: 'high',
    budget: 30,
  },
  {
    id: CAPABILITY.scuttle,
    description: "Sink the actor's own boat.",
    input: {},
    output: { sunk: { type: 'boolean' } },
    effect: {},
    kind: 'atomic',
    execution: 'immediate',
    cancellation: 'unsupported',
    risk: 'critical',
    budget: 30,
  },
];

/** Unsealed specs (digest ""); the host registry seals them. */
export function harborCapabilities(): CapabilitySpec[] {
  return ENTRIES.map((entry) => ({
    capability: { id: entry.id, version: HARBOR_VERSION },
    description: entry.description,
    input: closedSchema(entry.input),
    output: closedSchema(entry.output),
    effect_schema: closedSchema(entry.effect),
    kind: entry.kind,
    execution: entry.execution,
    cancellation: entry.cancellation,
    risk_floor: entry.risk,
    required_durability: 'advisory',
    execution_budget: { clock: 'step', value: entry.budget },
    max_input_bytes: 1024,
    max_output_bytes: 1024,
    max_effects: 4,
    produces_child_operations: entry.kind === 'macro',
    digest: '',
  }));
}

export function budgetOf(id: string): number {
  return ENTRIES.find((e) => e.id === id)?.budget ?? 30;
}

let observationSchema: Schema | undefined;

/** The observation payload's schema (its sha256 is the envelope's schema_ref). */
export function harborObservationSchema(): Schema {
  observationSchema ??= buildObservationSchema();
  return observationSchema;
}

const buildObservationSchema = (): Schema =>
  closedSchema({
    step: count(Number.MAX_SAFE_INTEGER),
    actor_id: { type: 'string' },
    boat: {
      type: 'object',
      additionalProperties: false,
      properties: { name: { type: 'string' }, berth: BERTH, cargo: count(1000), capacity: count(1000), hull: count(100), miles: count(1000000) },
      required: ['name', 'berth', 'cargo', 'capacity', 'hull', 'miles'],
    },
    dock: { type: 'object', additionalProperties: false, properties: { crates: count(100000) }, required: ['crates'] },
    fleet: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, properties: { actor_id: { type: 'string' }, berth: BERTH }, required: ['actor_id', 'berth'] },
    },
  });
