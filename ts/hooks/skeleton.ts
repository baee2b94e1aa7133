/**
 * Hooks skeletons (NOTES A14): `protocol scaffold` (and fetch, later) writes a hooks.mts with a
 * module-level sentinel and one throwing body per hook of the spec's flow mode, plus the sidecar
 * `.aigenora-hooks.json`. Loading a pristine skeleton is refused, listing the hooks still to write.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { flowMode, type MessageSpec, type Spec } from '../spec/types.js';
import { HOOK_NAMES } from './types.js';

export const SIDECAR = '.aigenora-hooks.json';
export const GENERATOR_VERSION = 'ts-v1';
export const NOT_IMPLEMENTED = 'AIGENORA_SKELETON_NOT_IMPLEMENTED';
/** The module-level sentinel, at the start of a line (the Python form too, for fetched reference skeletons). */
const SENTINEL = /^\s*(?:export\s+const\s+)?AIGENORA_SKELETON\s*(?::\s*boolean\s*)?=\s*(?:true|True)\b/m;
/** Banners of older (v005) generated skeletons, which carried neither sentinel nor markers. */
export const LEGACY_BANNERS = ['AIGENORA GENERATED HOOKS SKELETON (v005)', 'aigenora v005 skeleton: implement before hosting'];

const HOOK_DOCS: Record<string, [string, string]> = {
  proto_init: ['options, role, args, stateDir, decision', 'Called once before the session starts.'],
  proto_host_handle_join: ['msg', "Host: the guest's validated join; return the ready message."],
  proto_host_handle: ['msg', "Host: the guest's validated move; return {response, completed, abort}."],
  proto_guest_join_message: ['', 'Guest: the join message (the engine sends {"action":"join"} if this returns nothing).'],
  proto_guest_handle_ready: ['msg', "Guest: the host's validated ready."],
  proto_guest_first_action: ['', 'Guest: the first move after ready.'],
  proto_guest_handle: ['msg', "Guest: the host's validated reply; return the next move or {completed: true}."],
  proto_on_message: ['msg', 'A validated chat message from the peer.'],
  proto_on_send: ['msg', 'A message this side is about to send.'],
  proto_on_end: ['', 'The chat ended.'],
  proto_round_value: ['roundIndex, state', "This side's value for the round (the engine commits and reveals it)."],
  proto_round_judge: ['roundIndex, hostValue, guestValue, state', 'Host: the round_result message; completed when the game is over.'],
  proto_mp_deck_universe: ['', 'The deck as [rank_index, suit_index] pairs.'],
  proto_mp_initial_deal: ['state', 'How many cards each side is dealt: {host, guest}.'],
  proto_mp_choose_action: ['state', 'play, draw or pass.'],
  proto_mp_check_winner: ['state', "'host', 'guest' or null."],
  proto_mp_validate_play: ['state, who, play', '[ok, reason] for a play.'],
  proto_realtime_initial_state: ['', 'The initial simulation state.'],
  proto_realtime_commands: ['state, targetTick', "This side's commands for a future tick."],
  proto_realtime_validate_commands: ['side, commands, state, targetTick', 'The commands as the host will apply them; throw to reject them.'],
  proto_realtime_step: ['state, tick, commands', 'One tick: {state, events, outcome}.'],
  proto_group_initial_state: ['members', 'The initial group state.'],
  proto_group_member_joined: ['state, member', 'A member joined.'],
  proto_group_member_left: ['state, member, reason', 'A member left.'],
  proto_group_handle: ['state, actor, action', 'A member action: {state, events, direct, completed, outcome}.'],
  proto_group_view: ['state, viewer', "A member's private view."],
};

function describeField(name: string, f: MessageSpec['fields'][string]): string {
  const bits: string[] = [f.type];
  if (f.values) bits.push(`one of ${f.values.join('|')}`);
  if (f.min !== undefined || f.max !== undefined) bits.push(`${f.min ?? '-∞'}..${f.max ?? '∞'}`);
  if (f.max_length !== undefined) bits.push(`≤ ${f.max_length} bytes`);
  return `${name}${f.required ? '' : '?'}: ${bits.join(' ')}`;
}

/** The doc comment listing the spec's constraints that the hooks must respect. */
function constraints(spec: Spec): string[] {
  const lines = [`Protocol "${spec.name}" (flow mode ${flowMode(spec)}). Constraints from spec.json:`];
  for (const m of spec.messages)
    lines.push(
      `- message ${m.name} (${m.direction}): ${Object.entries(m.fields)
        .map(([k, f]) => describeField(k, f))
        .join('; ')}`,
    );
  for (const [k, p] of Object.entries(spec.parameters ?? {}))
    lines.push(
      `- parameter ${k}: ${p.type}${p.values ? ` one of ${p.values.join('|')}` : ''}${p.min !== undefined || p.max !== undefined ? ` ${p.min ?? '-∞'}..${p.max ?? '∞'}` : ''}${p.default !== undefined ? ` (default ${JSON.stringify(p.default)})` : ''}`,
    );
  if (spec.choices) lines.push(`- choices: ${spec.choices.join(', ')}`);
  if (spec.decision) lines.push(`- decision: ${JSON.stringify(spec.decision)}`);
  if (spec.timing) lines.push(`- timing: ${JSON.stringify(spec.timing)}`);
  for (const [k, v] of Object.entries(spec.rules ?? {})) lines.push(`- rules.${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  lines.push('Send only declared messages, read only declared fields, abort on anything unknown, and never hand raw peer text to an LLM.');
  return lines;
}

/** The skeleton hooks module (hooks.mts) for a spec. */
export function skeletonSource(spec: Spec): string {
  const mode = flowMode(spec);
  const body = HOOK_NAMES[mode].required.map((name) => {
    const [params, doc] = HOOK_DOCS[name] ?? ['...args', ''];
    return `    /** ${doc} */\n    ${name}(${
      params
        ? params
            .split(', ')
            .map((p) => `_${p}`)
            .join(', ')
        : ''
    }) {\n      throw new Error('${NOT_IMPLEMENTED}: ${name}');\n    },`;
  });
  return [
    `// Hooks for "${spec.name}", generated by \`aigenora protocol scaffold\`. Implement every hook below, then`,
    `// delete the AIGENORA_SKELETON line: until then the engine refuses to load this file.`,
    `import type { HooksModule } from 'aigenora/hooks';`,
    '',
    'export const AIGENORA_SKELETON = true;',
    '',
    '/**',
    ...constraints(spec).map((l) => ` * ${l}`),
    ' */',
    `const hooks: HooksModule<'${mode}'> = {`,
    `  mode: '${mode}',`,
    '  create: (_ctx) => ({',
    ...body,
    '  }),',
    '};',
    '',
    'export default hooks;',
    '',
  ].join('\n');
}

export interface Sidecar {
  skeleton_hash: string;
  spec_hash: string;
  generator_version: string;
  protocol_id: string;
  flow_mode: string;
  created_at: string;
}

export function sidecarFor(crypto: Crypto, hooksText: string, specBytes: Uint8Array, protocolId: string, spec: Spec, now = new Date()): Sidecar {
  return {
    skeleton_hash: toHex(crypto.sha256(utf8(hooksText))),
    spec_hash: toHex(crypto.sha256(specBytes)),
    generator_version: GENERATOR_VERSION,
    protocol_id: protocolId,
    flow_mode: flowMode(spec),
    created_at: `${now.toISOString().slice(0, 19)}Z`,
  };
}

export interface PristineCheck {
  pristine: boolean;
  /** Which of the four detection rules matched. */
  reasons: string[];
  /** Hooks still to write (from their NOT_IMPLEMENTED markers, else every required hook). */
  pending: string[];
}

/** The four detection rules of NOTES A14, on a hooks file's text. */
export function checkPristine(crypto: Crypto, dir: string, hooksText: string, spec: Spec): PristineCheck {
  const reasons: string[] = [];
  const sidecarPath = join(dir, SIDECAR);
  if (existsSync(sidecarPath)) {
    try {
      const s = JSON.parse(readFileSync(sidecarPath, 'utf8')) as Partial<Sidecar>;
      const specBytes = readFileSync(join(dir, 'spec.json'));
      if (s.skeleton_hash === toHex(crypto.sha256(utf8(hooksText))) && s.spec_hash === toHex(crypto.sha256(specBytes)))
        reasons.push('unchanged since generated (sidecar hashes match)');
    } catch {
      // An unreadable sidecar proves nothing either way; the other rules still apply.
    }
  }
  if (SENTINEL.test(hooksText)) reasons.push('AIGENORA_SKELETON sentinel present');
  const pending = [...new Set([...hooksText.matchAll(new RegExp(`${NOT_IMPLEMENTED}: (\\w+)`, 'g'))].map((m) => m[1]!))];
  if (pending.length) reasons.push(`${pending.length} hook(s) still throw ${NOT_IMPLEMENTED}`);
  if (LEGACY_BANNERS.some((b) => hooksText.includes(b))) reasons.push('legacy v005 skeleton banner present');
  return { pristine: reasons.length > 0, reasons, pending: pending.length ? pending : reasons.length ? HOOK_NAMES[flowMode(spec)].required : [] };
}

/** AIGENORA_ALLOW_SKELETON_HOOKS=1|true|yes: the test-only bypass. */
export function skeletonBypassFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes'].includes((env['AIGENORA_ALLOW_SKELETON_HOOKS'] ?? '').toLowerCase());
}
