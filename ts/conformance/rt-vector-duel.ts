/**
 * The test protocol of the reference's realtime vectors ("Vector Duel RT 1"): its hooks.py ships inside
 * the vector file's ruleset files, and this reproduces that file's logic in TypeScript so that our host,
 * driven by the vectors' scripted guest, can be compared ack for ack and frame for frame with what the
 * reference's host sent. Python's semantics are kept where the vectors reach them: `True` counts as the
 * move 1, a move string is mapped through MOVES, and the log keeps the last four ticks.
 */
import type { Role } from '../hooks/types.js';
import type { RealtimeHostHooks } from '../realtime/host.js';

const MOVES: Record<string, number> = { left: -1, stay: 0, right: 1 };

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Python's `x in (-1, 0, 1)`: booleans and whole floats compare equal to the integers. */
const isMove = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean') && [-1, 0, 1].includes(Number(v));

export function vectorDuelHooks(role: Role, options: Record<string, unknown>): RealtimeHostHooks {
  return {
    initialState: () => ({
      arena: String(options['arena'] || 'plain'),
      pos: { host: 0, guest: 10 },
      hp: { host: 3, guest: 3 },
      log: [],
      labels: { '\uff61': 'halfwidth', '\u{1F600}': 'emoji', z: 'ascii', '\u00e9': 'latin' },
      big: -9007199254740991,
    }),
    commands: (_state, targetTick) => (role === 'host' && targetTick % 3 === 0 ? [{ move: 'right' }] : []),
    validateCommands: (_side, commands) => {
      const out: Record<string, unknown>[] = [];
      for (const item of commands) {
        if (!isDict(item) || Object.keys(item).some((k) => k !== 'move' && k !== 'fire')) throw new Error('unknown command');
        if ('move' in item) {
          let mv = item['move'];
          if (typeof mv === 'string') {
            if (!(mv in MOVES)) throw new Error('bad move');
            mv = MOVES[mv];
          }
          if (!isMove(mv)) throw new Error('bad move');
          out.push({ move: mv });
        }
        if (item['fire'] === true) out.push({ fire: true });
      }
      return out;
    },
    step: (state, tick, commands) => {
      const s = state as { pos: Record<Role, number>; hp: Record<Role, number>; log: number[] };
      const events: Record<string, unknown>[] = [];
      for (const side of ['host', 'guest'] as Role[]) {
        for (const cmd of commands[side] as Record<string, unknown>[]) {
          if ('move' in cmd) s.pos[side] += Number(cmd['move']);
          if (cmd['fire']) {
            s.hp[side === 'host' ? 'guest' : 'host'] -= 1;
            events.push({ kind: 'hit', by: side, tick });
          }
        }
      }
      s.log = [...s.log, tick].slice(-4);
      const outcome = s.hp.guest <= 0 ? 'host' : tick >= 9 ? 'draw' : 'none';
      return { state, events, outcome };
    },
  };
}
