/** The shape of spec.json as the engine reads it (seed 000 and the reference's additions, NOTES A4–A6, A10). */

export const FLOW_MODES = [
  'session_loop',
  'simultaneous_round',
  'request_response',
  'free',
  'mental_poker',
  'authoritative_realtime',
  'authoritative_group',
] as const;
export type FlowMode = (typeof FLOW_MODES)[number];

export const DIRECTIONS = ['host_to_guest', 'guest_to_host', 'both'] as const;
export type Direction = (typeof DIRECTIONS)[number];
/** The direction a frame actually travels. */
export type WireDirection = Exclude<Direction, 'both'>;

export const FIELD_TYPES = [
  'integer',
  'enum',
  'boolean',
  'hash',
  'nonce',
  'id',
  'signature',
  'ticket',
  'text',
  'ciphertext',
  'key',
  'ot_blob',
  'array',
  'json',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldSchema {
  type: FieldType;
  required?: boolean;
  description?: string;
  min?: number;
  max?: number;
  values?: string[];
  max_length?: number;
  items?: FieldSchema;
  min_items?: number;
  max_items?: number;
  max_total_bytes?: number;
  container?: 'any' | 'object' | 'array';
}

export interface MessageSpec {
  name: string;
  direction: Direction;
  fields: Record<string, FieldSchema>;
  description?: string;
}

export interface ExchangeStep {
  message: string;
  direction?: WireDirection;
}

export interface Phase {
  phase?: string;
  repeat?: string;
  exchange?: ExchangeStep[];
}

export interface Flow {
  mode?: FlowMode;
  phases?: Phase[];
  round?: { value_field: string; value_type_ref: string };
  realtime?: Record<string, number | string>;
  group?: Record<string, unknown>;
  end_when?: string;
}

export interface TableColumn {
  type: 'integer' | 'boolean' | 'enum' | 'object';
  min?: number;
  max?: number;
  values?: string[];
  fields?: Record<string, TableColumn>;
  required?: boolean;
}

export interface ParameterSpec {
  type: 'integer' | 'boolean' | 'enum' | 'text' | 'id' | 'table';
  min?: number;
  max?: number;
  values?: string[];
  max_length?: number;
  default?: unknown;
  columns?: Record<string, TableColumn>;
  description?: string;
}

export interface Timing {
  mode: 'simultaneous' | 'sequential' | 'none';
  min_think_seconds?: number;
  max_think_seconds?: number;
}

export interface Decision {
  mode?: 'auto' | 'manual';
  timeout_seconds?: number;
  timeout_action?: 'fallback' | 'abort';
  [descriptive: string]: unknown;
}

export interface Spec {
  name: string;
  spec_version?: string;
  description?: string;
  type?: 'game' | 'service' | 'chat';
  family?: string;
  messages: MessageSpec[];
  flow?: Flow;
  rules?: Record<string, unknown>;
  choices?: string[];
  commit_reveal?: Record<string, unknown>;
  parameters?: Record<string, ParameterSpec>;
  timing?: Timing;
  decision?: Decision;
  shadow_judge?: boolean;
  tags?: string[];
  capabilities?: string[];
}

export function flowMode(spec: Pick<Spec, 'flow'>): FlowMode {
  const m = spec.flow?.mode;
  return m && (FLOW_MODES as readonly string[]).includes(m) ? m : 'session_loop';
}
