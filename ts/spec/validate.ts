/**
 * Validation of spec.json against every rule of seed 000 and the reference's additions (NOTES A4–A6,
 * A10): all problems are reported at once, each with a JSON pointer and a stable code.
 */
import { Issues, pointer, type SpecIssue } from './errors.js';
import { DIRECTIONS, FIELD_TYPES, FLOW_MODES, type Spec } from './types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const list = (xs: readonly string[]) => xs.join(', ');

export const SUPPORTED_SPEC_VERSIONS = ['1.0'];
const KNOWN_TOP = new Set([
  'name',
  'spec_version',
  'description',
  'type',
  'family',
  'messages',
  'flow',
  'rules',
  'choices',
  'commit_reveal',
  'parameters',
  'timing',
  'decision',
  'shadow_judge',
  'tags',
  'capabilities',
  'pricing',
  'ui',
]);

/** Keys each field type accepts besides type, required, description. */
const FIELD_KEYS: Record<string, string[]> = {
  integer: ['min', 'max'],
  enum: ['values'],
  text: ['max_length'],
  ciphertext: ['max_length'],
  ot_blob: ['max_length'],
  array: ['items', 'min_items', 'max_items', 'max_total_bytes'],
  json: ['container', 'max_total_bytes'],
};
const COMMON_FIELD_KEYS = ['type', 'required', 'description'];
const SCALAR_ITEM_TYPES = FIELD_TYPES.filter((t) => t !== 'array' && t !== 'json');

function checkCount(issues: Issues, at: string, v: unknown, name: string, min = 0): boolean {
  if (v === undefined) return true;
  if (!isInt(v) || v < min) {
    issues.error(pointer(...[]) + at, 'FIELD_LIMIT_INVALID', `${name} must be an integer >= ${min}`);
    return false;
  }
  return true;
}

function checkValues(issues: Issues, at: string, v: unknown): void {
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string'))
    issues.error(at, 'FIELD_VALUES_INVALID', 'an enum needs "values": a non-empty array of strings');
  else if (new Set(v).size !== v.length) issues.error(at, 'FIELD_VALUES_INVALID', 'enum values must be unique');
}

/** A field schema of a message (or an array's items). */
function checkField(issues: Issues, at: string, f: unknown, asItems = false): void {
  if (!isObj(f)) return issues.error(at, 'FIELD_NOT_OBJECT', 'a field schema must be an object such as {"type": "integer"}');
  const t = f['type'];
  if (typeof t !== 'string' || !(FIELD_TYPES as readonly string[]).includes(t))
    return issues.error(`${at}/type`, 'FIELD_TYPE_UNSUPPORTED', `unsupported field type ${JSON.stringify(t)}; use one of ${list(FIELD_TYPES)}`);
  if (asItems && !(SCALAR_ITEM_TYPES as readonly string[]).includes(t))
    issues.error(`${at}/type`, 'FIELD_ITEMS_INVALID', `array items must be a scalar type (${list(SCALAR_ITEM_TYPES)}), not ${t}`);
  const allowed = new Set([...COMMON_FIELD_KEYS, ...(FIELD_KEYS[t] ?? [])]);
  for (const k of Object.keys(f))
    if (!allowed.has(k)) issues.error(`${at}/${k}`, 'FIELD_KEY_UNKNOWN', `"${k}" does not apply to a ${t} field (allowed: ${list([...allowed])})`);
  if (f['required'] !== undefined && typeof f['required'] !== 'boolean')
    issues.error(`${at}/required`, 'FIELD_REQUIRED_INVALID', '"required" must be true or false');
  if (t === 'integer') {
    for (const k of ['min', 'max']) if (f[k] !== undefined && !isInt(f[k])) issues.error(`${at}/${k}`, 'FIELD_LIMIT_INVALID', `${k} must be an integer`);
    if (isInt(f['min']) && isInt(f['max']) && f['min'] > f['max']) issues.error(`${at}/min`, 'FIELD_LIMIT_INVALID', `min ${f['min']} is above max ${f['max']}`);
  }
  if (t === 'enum') checkValues(issues, `${at}/values`, f['values']);
  if (t === 'text' || t === 'ciphertext' || t === 'ot_blob') checkCount(issues, `${at}/max_length`, f['max_length'], 'max_length', 1);
  if (t === 'array') {
    if (f['items'] === undefined) issues.error(`${at}/items`, 'FIELD_ITEMS_INVALID', 'an array field needs "items", a scalar field schema');
    else checkField(issues, `${at}/items`, f['items'], true);
    const okMin = checkCount(issues, `${at}/min_items`, f['min_items'], 'min_items');
    const okMax = checkCount(issues, `${at}/max_items`, f['max_items'], 'max_items');
    if (okMin && okMax && isInt(f['min_items']) && isInt(f['max_items']) && f['min_items'] > f['max_items'])
      issues.error(`${at}/min_items`, 'FIELD_LIMIT_INVALID', 'min_items is above max_items');
    checkCount(issues, `${at}/max_total_bytes`, f['max_total_bytes'], 'max_total_bytes', 1);
  }
  if (t === 'json') {
    if (f['container'] !== undefined && !['any', 'object', 'array'].includes(f['container'] as string))
      issues.error(`${at}/container`, 'FIELD_CONTAINER_INVALID', 'container must be "any", "object" or "array"');
    checkCount(issues, `${at}/max_total_bytes`, f['max_total_bytes'], 'max_total_bytes', 1);
  }
}

/** The action values a message answers to (its `action` enum), if it declares one. */
export function actionsOf(m: Obj): string[] {
  const fields = isObj(m['fields']) ? m['fields'] : {};
  const a = fields['action'];
  return isObj(a) && a['type'] === 'enum' && Array.isArray(a['values']) ? (a['values'] as unknown[]).filter((v): v is string => typeof v === 'string') : [];
}

const overlaps = (a: unknown, b: unknown) => a === 'both' || b === 'both' || a === b;

function checkMessages(issues: Issues, messages: unknown): Map<string, Obj> {
  const byName = new Map<string, Obj>();
  if (!Array.isArray(messages) || messages.length === 0) {
    issues.error('/messages', 'SPEC_MESSAGES_MISSING', '"messages" is required: a non-empty array of {name, direction, fields}');
    return byName;
  }
  messages.forEach((m, i) => {
    const at = pointer('messages', i);
    if (!isObj(m)) return issues.error(at, 'MESSAGE_NOT_OBJECT', 'a message must be an object {name, direction, fields}');
    if (!isNonEmptyString(m['name'])) issues.error(`${at}/name`, 'MESSAGE_NAME_MISSING', 'a message needs a non-empty "name"');
    else if (byName.has(m['name'])) issues.error(`${at}/name`, 'MESSAGE_NAME_DUPLICATE', `message name "${m['name']}" is used twice; names must be unique`);
    else byName.set(m['name'], m);
    if (!(DIRECTIONS as readonly unknown[]).includes(m['direction']))
      issues.error(`${at}/direction`, 'MESSAGE_DIRECTION_INVALID', `direction must be one of ${list(DIRECTIONS)}`);
    if (!isObj(m['fields']) || Object.keys(m['fields']).length === 0)
      issues.error(`${at}/fields`, 'MESSAGE_FIELDS_EMPTY', '"fields" must be a non-empty object of field schemas');
    else for (const [k, f] of Object.entries(m['fields'])) checkField(issues, `${at}/fields/${pointer(k).slice(1)}`, f);
    for (const k of Object.keys(m))
      if (!['name', 'direction', 'fields', 'description'].includes(k))
        issues.warn(`${at}/${k}`, 'MESSAGE_KEY_UNKNOWN', `"${k}" is not part of a message definition and is ignored`);
    if (isObj(m['fields']) && actionsOf(m).length === 0)
      issues.warn(
        `${at}/fields`,
        'MESSAGE_NO_ACTION',
        'without an "action" enum field this message can never be matched; add {"action": {"type": "enum", "values": [name], "required": true}}',
      );
  });
  // The engine matches an incoming message by action and direction; two candidates would be ambiguous.
  const seen: { action: string; dir: unknown; i: number }[] = [];
  messages.forEach((m, i) => {
    if (!isObj(m)) return;
    for (const action of actionsOf(m)) {
      const clash = seen.find((s) => s.action === action && overlaps(s.dir, m['direction']));
      if (clash)
        issues.error(
          pointer('messages', i, 'fields', 'action', 'values'),
          'MESSAGE_ACTION_AMBIGUOUS',
          `action "${action}" is already declared by messages[${clash.i}] for an overlapping direction`,
        );
      seen.push({ action, dir: m['direction'], i });
    }
  });
  return byName;
}

const REALTIME: Record<string, [number, number] | string[]> = {
  tick_rate_hz: [1, 60],
  input_delay_ticks: [1, 120],
  snapshot_every_ticks: [1, 60],
  max_command_lead_ticks: [1, 600],
  max_commands_per_frame: [1, 1024],
  disconnect_policy: ['abort', 'continue'],
};

function checkRange(issues: Issues, at: string, code: string, v: unknown, lo: number, hi: number, name: string): boolean {
  if (!isInt(v) || v < lo || v > hi) {
    issues.error(at, code, `${name} must be an integer from ${lo} to ${hi}`);
    return false;
  }
  return true;
}

function checkRealtime(issues: Issues, rt: unknown): void {
  const at = '/flow/realtime';
  if (!isObj(rt))
    return issues.error(
      at,
      'FLOW_REALTIME_INVALID',
      'authoritative_realtime needs flow.realtime {tick_rate_hz, input_delay_ticks, snapshot_every_ticks, max_command_lead_ticks, max_commands_per_frame, disconnect_policy}',
    );
  for (const [k, rule] of Object.entries(REALTIME)) {
    if (!(k in rt)) issues.error(`${at}/${k}`, 'FLOW_REALTIME_INVALID', `flow.realtime.${k} is required`);
    else if (Array.isArray(rule) && typeof rule[0] === 'string') {
      if (!(rule as string[]).includes(rt[k] as string)) issues.error(`${at}/${k}`, 'FLOW_REALTIME_INVALID', `${k} must be ${list(rule as string[])}`);
    } else checkRange(issues, `${at}/${k}`, 'FLOW_REALTIME_INVALID', rt[k], (rule as number[])[0]!, (rule as number[])[1]!, k);
  }
  for (const k of Object.keys(rt)) if (!(k in REALTIME)) issues.error(`${at}/${k}`, 'FLOW_REALTIME_INVALID', `unknown key flow.realtime.${k}`);
  if (isInt(rt['max_command_lead_ticks']) && isInt(rt['input_delay_ticks']) && rt['max_command_lead_ticks'] < rt['input_delay_ticks'])
    issues.error(`${at}/max_command_lead_ticks`, 'FLOW_REALTIME_INVALID', 'max_command_lead_ticks must be >= input_delay_ticks');
}

function checkGroup(issues: Issues, g: unknown): void {
  const at = '/flow/group';
  const code = 'FLOW_GROUP_INVALID';
  if (!isObj(g)) return issues.error(at, code, 'authoritative_group needs flow.group {min_participants, max_participants, ...}');
  const allowed = [
    'min_participants',
    'max_participants',
    'allow_late_join',
    'recovery_mode',
    'start_policy',
    'checkpoint_every_events',
    'max_action_bytes',
    'max_events_per_action',
    'peer_channels',
  ];
  for (const k of Object.keys(g)) if (!allowed.includes(k)) issues.error(`${at}/${k}`, code, `unknown key flow.group.${k}`);
  const okMin = checkRange(issues, `${at}/min_participants`, code, g['min_participants'], 2, 32, 'min_participants');
  const okMax = checkRange(issues, `${at}/max_participants`, code, g['max_participants'], 2, 32, 'max_participants');
  if (okMin && okMax && (g['min_participants'] as number) > (g['max_participants'] as number))
    issues.error(`${at}/min_participants`, code, 'min_participants is above max_participants');
  if (g['allow_late_join'] !== undefined && typeof g['allow_late_join'] !== 'boolean')
    issues.error(`${at}/allow_late_join`, code, 'allow_late_join must be a boolean');
  if (g['recovery_mode'] !== undefined && !['exact', 'restart_round', 'abort'].includes(g['recovery_mode'] as string))
    issues.error(`${at}/recovery_mode`, code, 'recovery_mode must be exact, restart_round or abort');
  if (g['start_policy'] !== undefined && !['min_ready', 'full', 'fixed_full'].includes(g['start_policy'] as string))
    issues.error(`${at}/start_policy`, code, 'start_policy must be min_ready, full or fixed_full');
  if (g['checkpoint_every_events'] !== undefined)
    checkRange(issues, `${at}/checkpoint_every_events`, code, g['checkpoint_every_events'], 1, 256, 'checkpoint_every_events');
  if (g['max_action_bytes'] !== undefined) checkRange(issues, `${at}/max_action_bytes`, code, g['max_action_bytes'], 256, 65536, 'max_action_bytes');
  if (g['max_events_per_action'] !== undefined)
    checkRange(issues, `${at}/max_events_per_action`, code, g['max_events_per_action'], 1, 256, 'max_events_per_action');
  const pc = g['peer_channels'];
  if (pc !== undefined) {
    const pat = `${at}/peer_channels`;
    if (!isObj(pc) || typeof pc['enabled'] !== 'boolean') return issues.error(pat, code, 'peer_channels must be an object with a boolean "enabled"');
    if (!pc['enabled']) {
      if (Object.keys(pc).length !== 1) issues.error(pat, code, 'disabled peer_channels must contain only "enabled"');
      return;
    }
    if (!['all_members', 'hook'].includes(pc['routing'] as string)) issues.error(`${pat}/routing`, code, 'routing must be all_members or hook');
    const ch = pc['channels'];
    if (
      !Array.isArray(ch) ||
      ch.length < 1 ||
      ch.length > 16 ||
      new Set(ch).size !== ch.length ||
      !ch.every((c) => typeof c === 'string' && /^[a-z][a-z0-9_-]{0,31}$/.test(c))
    )
      issues.error(`${pat}/channels`, code, 'channels must be 1-16 unique lowercase slugs (a-z first, then a-z0-9_-, at most 32 characters)');
    if (pc['max_message_bytes'] !== undefined) checkRange(issues, `${pat}/max_message_bytes`, code, pc['max_message_bytes'], 256, 65536, 'max_message_bytes');
    for (const k of Object.keys(pc))
      if (!['enabled', 'routing', 'channels', 'max_message_bytes'].includes(k)) issues.error(`${pat}/${k}`, code, `unknown key peer_channels.${k}`);
  }
}

function checkFlow(issues: Issues, flow: unknown, messages: Map<string, Obj>): void {
  if (flow === undefined) return;
  if (!isObj(flow)) return issues.error('/flow', 'FLOW_NOT_OBJECT', '"flow" must be an object such as {"mode": "session_loop", "phases": [...]}');
  const mode = flow['mode'] === undefined || flow['mode'] === '' ? 'session_loop' : flow['mode'];
  if (!(FLOW_MODES as readonly unknown[]).includes(mode))
    issues.error('/flow/mode', 'FLOW_MODE_UNKNOWN', `unknown flow mode ${JSON.stringify(mode)}; use one of ${list(FLOW_MODES)}`);
  const phases = flow['phases'];
  if (phases !== undefined && !Array.isArray(phases)) issues.error('/flow/phases', 'FLOW_PHASES_INVALID', '"phases" must be an array');
  if (Array.isArray(phases))
    phases.forEach((p, i) => {
      const at = pointer('flow', 'phases', i);
      if (!isObj(p)) return issues.error(at, 'FLOW_PHASES_INVALID', 'a phase must be an object {phase, repeat?, exchange}');
      const rep = p['repeat'];
      // The reference refuses any other value at load time, so a spec accepted here is accepted there.
      if (rep !== undefined && !REPEATS.includes(rep as string))
        issues.error(
          `${at}/repeat`,
          'FLOW_REPEAT_INVALID',
          `repeat must be one of ${REPEATS.map((r) => JSON.stringify(r)).join(', ')}, not ${JSON.stringify(rep)}`,
        );
      const ex = p['exchange'];
      if (ex === undefined) return;
      if (!Array.isArray(ex)) return issues.error(`${at}/exchange`, 'FLOW_PHASES_INVALID', '"exchange" must be an array of {message, direction}');
      ex.forEach((s, j) => {
        const sat = `${at}/exchange/${j}`;
        if (!isObj(s)) return issues.error(sat, 'FLOW_PHASES_INVALID', 'an exchange step must be {message, direction}');
        const m = typeof s['message'] === 'string' ? messages.get(s['message']) : undefined;
        if (!m)
          return issues.error(
            `${sat}/message`,
            'FLOW_EXCHANGE_UNKNOWN_MESSAGE',
            `exchange names message ${JSON.stringify(s['message'])}, which "messages" does not declare`,
          );
        if (s['direction'] === undefined) return; // descriptive steps may leave the direction to the message
        if (s['direction'] !== 'host_to_guest' && s['direction'] !== 'guest_to_host')
          issues.error(`${sat}/direction`, 'FLOW_EXCHANGE_DIRECTION_MISMATCH', 'an exchange step travels host_to_guest or guest_to_host');
        else if (!overlaps(m['direction'], s['direction']))
          issues.error(
            `${sat}/direction`,
            'FLOW_EXCHANGE_DIRECTION_MISMATCH',
            `message "${s['message']}" is declared ${String(m['direction'])}, not ${s['direction']}`,
          );
      });
    });
  if (mode === 'simultaneous_round') {
    const r = flow['round'];
    if (!isObj(r) || !isNonEmptyString(r['value_field']) || !isNonEmptyString(r['value_type_ref']))
      return issues.error(
        '/flow/round',
        'FLOW_ROUND_INVALID',
        'simultaneous_round needs flow.round {"value_field": "choice", "value_type_ref": "reveal.fields.choice"}',
      );
    const [msg, fieldsWord, field, ...more] = r['value_type_ref'].split('.');
    const target = msg ? messages.get(msg) : undefined;
    if (!target || fieldsWord !== 'fields' || !field || more.length || !isObj(target['fields']) || !(field in target['fields']))
      return issues.error(
        '/flow/round/value_type_ref',
        'FLOW_ROUND_REF_UNRESOLVED',
        `value_type_ref ${JSON.stringify(r['value_type_ref'])} must name a declared field as "<message>.fields.<field>"`,
      );
    // The engine runs commit → reveal itself; the reveal must carry the value and the nonce.
    const reveal = [...messages.values()].find((m) => actionsOf(m).includes('reveal'));
    const commit = [...messages.values()].find((m) => actionsOf(m).includes('commit'));
    if (!commit) issues.error('/messages', 'FLOW_ROUND_MESSAGE_MISSING', 'simultaneous_round needs a "commit" message {action, round, hash}');
    if (!reveal) issues.error('/messages', 'FLOW_ROUND_MESSAGE_MISSING', 'simultaneous_round needs a "reveal" message {action, round, <value_field>, nonce}');
    else if (!isObj(reveal['fields']) || !(r['value_field'] in reveal['fields']) || !('nonce' in reveal['fields']))
      issues.error('/flow/round/value_field', 'FLOW_ROUND_MESSAGE_MISSING', `the reveal message must declare "${r['value_field']}" and "nonce"`);
  }
  if (mode === 'authoritative_realtime') checkRealtime(issues, flow['realtime']);
  if (mode === 'authoritative_group') checkGroup(issues, flow['group']);
  if (mode === 'free' && flow['end_when'] !== undefined && flow['end_when'] !== 'either_ends')
    issues.error('/flow/end_when', 'FLOW_END_WHEN_INVALID', 'end_when must be "either_ends"');
}

const PARAM_TYPES = ['integer', 'boolean', 'enum', 'text', 'id', 'table'];
const REPEATS = ['best_of', 'total_rounds', 'until game_over'];

function checkColumns(issues: Issues, at: string, cols: unknown): void {
  if (!isObj(cols) || Object.keys(cols).length === 0)
    return issues.error(at, 'TABLE_COLUMNS_INVALID', 'a table needs "columns": a non-empty object of column schemas');
  for (const [k, c] of Object.entries(cols)) {
    const cat = `${at}/${pointer(k).slice(1)}`;
    if (!isObj(c) || !['integer', 'boolean', 'enum', 'object'].includes(c['type'] as string)) {
      issues.error(cat, 'TABLE_COLUMNS_INVALID', 'a column is {"type": integer|boolean|enum} or {"type": "object", "fields": {...}}');
      continue;
    }
    const allowed = { integer: ['min', 'max'], boolean: [], enum: ['values'], object: ['fields'] }[c['type'] as 'integer'];
    for (const key of Object.keys(c))
      if (!['type', 'required', 'description', ...allowed].includes(key))
        issues.error(`${cat}/${key}`, 'TABLE_COLUMNS_INVALID', `"${key}" does not apply to a ${String(c['type'])} column`);
    if (c['type'] === 'object') checkColumns(issues, `${cat}/fields`, c['fields']);
    if (c['type'] === 'enum') checkValues(issues, `${cat}/values`, c['values']);
    if (c['type'] === 'integer') {
      // A limit that is not an integer would be silently ignored when rows are checked.
      for (const k of ['min', 'max']) if (c[k] !== undefined && !isInt(c[k])) issues.error(`${cat}/${k}`, 'TABLE_COLUMNS_INVALID', `${k} must be an integer`);
      if (isInt(c['min']) && isInt(c['max']) && c['min'] > c['max']) issues.error(`${cat}/min`, 'TABLE_COLUMNS_INVALID', 'min is above max');
    }
    if (c['required'] !== undefined && typeof c['required'] !== 'boolean')
      issues.error(`${cat}/required`, 'TABLE_COLUMNS_INVALID', 'required must be true or false');
  }
}

function checkParameters(issues: Issues, params: unknown): Obj {
  if (params === undefined) return {};
  if (!isObj(params)) {
    issues.error('/parameters', 'PARAMETERS_NOT_OBJECT', '"parameters" must be an object {name: {type, ...}}');
    return {};
  }
  for (const [name, p] of Object.entries(params)) {
    const at = pointer('parameters', name);
    if (!isObj(p) || !PARAM_TYPES.includes(p['type'] as string)) {
      issues.error(`${at}/type`, 'PARAMETER_TYPE_UNSUPPORTED', `parameter type must be one of ${list(PARAM_TYPES)}`);
      continue;
    }
    const t = p['type'] as string;
    const allowed = [
      'type',
      'description',
      'default',
      ...(({ integer: ['min', 'max'], enum: ['values'], text: ['max_length'], table: ['columns'] } as Record<string, string[]>)[t] ?? []),
    ];
    for (const k of Object.keys(p)) if (!allowed.includes(k)) issues.error(`${at}/${k}`, 'PARAMETER_KEY_UNKNOWN', `"${k}" does not apply to a ${t} parameter`);
    if (t === 'integer') {
      for (const k of ['min', 'max']) if (p[k] !== undefined && !isInt(p[k])) issues.error(`${at}/${k}`, 'PARAMETER_LIMIT_INVALID', `${k} must be an integer`);
      if (isInt(p['min']) && isInt(p['max']) && p['min'] > p['max'])
        issues.error(`${at}/min`, 'PARAMETER_LIMIT_INVALID', `min ${p['min']} is above max ${p['max']}`);
    }
    if (t === 'enum') checkValues(issues, `${at}/values`, p['values']);
    if (t === 'text' && p['max_length'] !== undefined && (!isInt(p['max_length']) || p['max_length'] < 1))
      issues.error(`${at}/max_length`, 'PARAMETER_LIMIT_INVALID', 'max_length must be a positive integer');
    if (t === 'table') checkColumns(issues, `${at}/columns`, p['columns']);
    if (p['default'] !== undefined) {
      const sub = new Issues();
      checkOption(sub, `${at}/default`, p as never, p['default']);
      for (const e of sub.errors) issues.error(e.pointer, 'PARAMETER_DEFAULT_INVALID', `default: ${e.message}`);
    }
  }
  return params;
}

function checkTableRow(issues: Issues, at: string, cols: Obj, row: unknown): void {
  if (!isObj(row)) return issues.error(at, 'OPTION_TABLE_INVALID', 'a table row must be an object');
  for (const k of Object.keys(row)) if (!(k in cols)) issues.error(`${at}/${k}`, 'OPTION_TABLE_INVALID', `unknown column "${k}"`);
  for (const [k, c] of Object.entries(cols) as [string, Obj][]) {
    const v = row[k];
    const cat = `${at}/${pointer(k).slice(1)}`;
    if (v === undefined) {
      if (c['required'] !== false) issues.error(cat, 'OPTION_TABLE_INVALID', `column "${k}" is required`);
      continue;
    }
    if (c['type'] === 'object') checkTableRow(issues, cat, c['fields'] as Obj, v);
    else checkScalar(issues, cat, c, v, 'OPTION_TABLE_INVALID');
  }
}

function checkScalar(issues: Issues, at: string, p: Obj, v: unknown, code: string): void {
  const t = p['type'];
  if (t === 'integer') {
    if (!isInt(v)) return issues.error(at, code, `expected an integer, got ${JSON.stringify(v)}`);
    if (isInt(p['min']) && v < p['min']) issues.error(at, code, `${v} is below the minimum ${p['min']}`);
    if (isInt(p['max']) && v > p['max']) issues.error(at, code, `${v} is above the maximum ${p['max']}`);
  } else if (t === 'boolean') {
    if (typeof v !== 'boolean') issues.error(at, code, `expected true or false, got ${JSON.stringify(v)}`);
  } else if (t === 'enum') {
    if (!(p['values'] as unknown[] | undefined)?.includes(v))
      issues.error(at, code, `${JSON.stringify(v)} is not one of ${list((p['values'] as string[]) ?? [])}`);
  } else if (t === 'text') {
    if (typeof v !== 'string') return issues.error(at, code, 'expected a string');
    const max = isInt(p['max_length']) ? p['max_length'] : 2000;
    if (new TextEncoder().encode(v).length > max) issues.error(at, code, `longer than ${max} UTF-8 bytes`);
  } else if (t === 'id') {
    if (typeof v !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(v)) issues.error(at, code, 'expected an id: 1-128 of A-Z a-z 0-9 _ . : -');
  }
}

function checkOption(issues: Issues, at: string, p: Obj, v: unknown): void {
  if (p['type'] !== 'table') return checkScalar(issues, at, p, v, 'OPTION_INVALID');
  if (!isObj(v)) return issues.error(at, 'OPTION_TABLE_INVALID', 'a table option is an object of rows {rowKey: {column: value}}');
  for (const [rk, row] of Object.entries(v)) checkTableRow(issues, `${at}/${pointer(rk).slice(1)}`, p['columns'] as Obj, row);
}

/**
 * Options (from --options or an invitation) against the spec's parameters. Declared options are
 * checked for type and range; undeclared ones are carried as non-contract metadata, flagged as
 * warnings, and must never drive rules.
 */
export function validateOptions(spec: Pick<Spec, 'parameters'>, options: unknown): { issues: SpecIssue[]; undeclared: string[] } {
  const issues = new Issues();
  const undeclared: string[] = [];
  if (!isObj(options)) {
    issues.error('', 'OPTIONS_NOT_OBJECT', 'options must be a JSON object');
    return { issues: issues.list, undeclared };
  }
  const params = (spec.parameters ?? {}) as Obj;
  for (const [k, v] of Object.entries(options)) {
    const p = params[k];
    if (!isObj(p)) {
      undeclared.push(k);
      issues.warn(pointer(k), 'OPTION_UNDECLARED', `option "${k}" is not a declared parameter: carried as metadata, never used by the rules`);
      continue;
    }
    checkOption(issues, pointer(k), p, v);
  }
  return { issues: issues.list, undeclared };
}

function checkTiming(issues: Issues, t: unknown): void {
  if (t === undefined) return;
  if (!isObj(t)) return issues.error('/timing', 'TIMING_INVALID', '"timing" must be {mode, min_think_seconds, max_think_seconds}');
  if (!['simultaneous', 'sequential', 'none'].includes(t['mode'] as string))
    issues.error('/timing/mode', 'TIMING_INVALID', 'timing.mode must be simultaneous, sequential or none');
  for (const k of ['min_think_seconds', 'max_think_seconds'])
    if (t[k] !== undefined && (!isInt(t[k]) || (t[k] as number) < 0)) issues.error(`/timing/${k}`, 'TIMING_INVALID', `${k} must be an integer >= 0`);
  if (isInt(t['min_think_seconds']) && isInt(t['max_think_seconds']) && t['max_think_seconds'] < t['min_think_seconds'])
    issues.error('/timing/max_think_seconds', 'TIMING_INVALID', 'max_think_seconds must be >= min_think_seconds');
  for (const k of Object.keys(t))
    if (!['mode', 'min_think_seconds', 'max_think_seconds'].includes(k)) issues.error(`/timing/${k}`, 'TIMING_INVALID', `unknown key timing.${k}`);
}

function checkDecision(issues: Issues, d: unknown): void {
  if (d === undefined) return;
  if (!isObj(d)) return issues.error('/decision', 'DECISION_INVALID', '"decision" must be an object {mode, timeout_seconds, timeout_action}');
  if (d['mode'] !== undefined && !['auto', 'manual'].includes(d['mode'] as string))
    issues.error('/decision/mode', 'DECISION_INVALID', 'decision.mode must be auto or manual');
  if (d['timeout_seconds'] !== undefined && (!isInt(d['timeout_seconds']) || d['timeout_seconds'] < 1))
    issues.error('/decision/timeout_seconds', 'DECISION_INVALID', 'timeout_seconds must be a positive integer');
  if (d['timeout_action'] !== undefined && !['fallback', 'abort'].includes(d['timeout_action'] as string))
    issues.error('/decision/timeout_action', 'DECISION_INVALID', 'timeout_action must be fallback or abort');
}

export interface ValidateOptions {
  /** `protocol hash` accepts an unknown spec_version with a warning; everything else refuses it. */
  allowUnknownVersion?: boolean;
}

/**
 * Every problem in a parsed spec; it is valid when no issue has severity "error". From text, checkSpecText
 * also refuses what JSON.parse would let through (duplicate keys, lone surrogates, out-of-range numbers).
 *
 * @param spec - the parsed spec.json (anything: a non-object is one issue at the root)
 * @param opts - `allowUnknownVersion` turns an unknown spec_version into a warning
 * @returns each issue with its JSON pointer, code, message and severity
 * @example
 * ```ts
 * const errors = validateSpec(JSON.parse(text)).filter((i) => i.severity === 'error');
 * ```
 */
export function validateSpec(spec: unknown, opts: ValidateOptions = {}): SpecIssue[] {
  const issues = new Issues();
  if (!isObj(spec)) {
    issues.error('', 'SPEC_NOT_OBJECT', 'spec.json must contain a JSON object');
    return issues.list;
  }
  if (!isNonEmptyString(spec['name'])) issues.error('/name', 'SPEC_NAME_MISSING', '"name" is required: a non-empty string');
  const version = spec['spec_version'] ?? '1.0';
  if (!SUPPORTED_SPEC_VERSIONS.includes(version as string)) {
    const msg = `spec_version ${JSON.stringify(version)} is not supported (supported: ${list(SUPPORTED_SPEC_VERSIONS)})`;
    if (opts.allowUnknownVersion) issues.warn('/spec_version', 'SPEC_VERSION_UNSUPPORTED', msg);
    else issues.error('/spec_version', 'SPEC_VERSION_UNSUPPORTED', msg);
  }
  // type is the invitation kind: game, service, chat in seed 000; the reference also uses supply and demand.
  if (spec['type'] !== undefined && !isNonEmptyString(spec['type']))
    issues.error('/type', 'SPEC_TYPE_INVALID', 'type must be a non-empty string such as game, service or chat');
  for (const k of Object.keys(spec))
    if (!KNOWN_TOP.has(k))
      issues.warn(pointer(k), 'SPEC_KEY_UNKNOWN', `"${k}" is not a spec.json key; it is kept as presentation data and not part of protocol_id`);
  const messages = checkMessages(issues, spec['messages']);
  checkParameters(issues, spec['parameters']);
  checkFlow(issues, spec['flow'], messages);
  checkTiming(issues, spec['timing']);
  checkDecision(issues, spec['decision']);
  if (spec['shadow_judge'] !== undefined && typeof spec['shadow_judge'] !== 'boolean')
    issues.error('/shadow_judge', 'SHADOW_JUDGE_INVALID', 'shadow_judge must be true or false');
  const choices = spec['choices'];
  if (
    choices !== undefined &&
    (!Array.isArray(choices) || choices.length === 0 || !choices.every((c) => typeof c === 'string') || new Set(choices).size !== choices.length)
  )
    issues.error('/choices', 'CHOICES_INVALID', '"choices" must be a non-empty array of unique strings');
  if (spec['commit_reveal'] !== undefined) {
    const cr = spec['commit_reveal'];
    if (!isObj(cr)) issues.error('/commit_reveal', 'COMMIT_REVEAL_INVALID', '"commit_reveal" must be an object');
    else if (cr['algorithm'] !== undefined && cr['algorithm'] !== 'SHA256')
      issues.error('/commit_reveal/algorithm', 'COMMIT_REVEAL_INVALID', 'the only commit algorithm is SHA256');
  }
  if (spec['rules'] !== undefined && !isObj(spec['rules'])) issues.error('/rules', 'RULES_INVALID', '"rules" must be an object of human-readable rules');
  for (const k of ['tags', 'capabilities'])
    if (spec[k] !== undefined && (!Array.isArray(spec[k]) || !(spec[k] as unknown[]).every((x) => typeof x === 'string')))
      issues.error(pointer(k), 'SPEC_KEY_INVALID', `"${k}" must be an array of strings`);
  return issues.list;
}
