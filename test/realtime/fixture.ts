// A tiny realtime protocol for the tests: each side adds to its counter; the match ends in a draw at
// tick 12 unless the guest reaches 8 first. Commands are {add: 1..3}; anything else is refused.
import type { RealtimeHooks, Role } from '../../ts/hooks/types.js';
import type { Spec } from '../../ts/spec/types.js';
import type { RealtimeHostHooks } from '../../ts/realtime/host.js';
import { realtimeConfig } from '../../ts/realtime/wire.js';

export const SPEC = {
  name: 'Counter RT',
  spec_version: '1.0',
  flow: {
    mode: 'authoritative_realtime',
    realtime: {
      tick_rate_hz: 20,
      input_delay_ticks: 2,
      snapshot_every_ticks: 5,
      max_command_lead_ticks: 4,
      max_commands_per_frame: 3,
      disconnect_policy: 'abort',
    },
  },
  messages: [],
} as unknown as Spec;

export const CONFIG = realtimeConfig(SPEC as never);

export function counterHooks(role: Role, o: { guestAdd?: number; endAt?: number } = {}): RealtimeHooks {
  return {
    proto_realtime_initial_state: () => ({ host: 0, guest: 0, ticks: [] as number[] }),
    proto_realtime_commands: () => (role === 'host' ? [{ add: 2 }] : [{ add: o.guestAdd ?? 1 }]),
    proto_realtime_validate_commands: (_side, commands) =>
      commands.map((c) => {
        const add = (c as { add?: unknown }).add;
        if (typeof add !== 'number' || !Number.isInteger(add) || add < 1 || add > 3) throw new Error('bad add');
        return { add };
      }),
    proto_realtime_step: (state, tick, commands) => {
      const s = state as { host: number; guest: number; ticks: number[] };
      for (const side of ['host', 'guest'] as Role[]) for (const c of commands[side] as { add: number }[]) s[side] += c.add;
      s.ticks = [...s.ticks, tick].slice(-3);
      const outcome = s.guest >= 8 ? 'guest' : tick >= (o.endAt ?? 12) ? 'draw' : 'none';
      return { state: s, events: commands.guest.length ? [{ tick, guest: commands.guest.length }] : [], outcome };
    },
  };
}

/** The same hooks as the host state machine calls them in line. */
export function inline(h: RealtimeHooks): RealtimeHostHooks {
  return {
    initialState: () => h.proto_realtime_initial_state(),
    commands: (s, t) => h.proto_realtime_commands(s, t),
    validateCommands: (side, c, s, t) => h.proto_realtime_validate_commands(side, c, s, t),
    step: (s, t, c) => h.proto_realtime_step(s, t, c),
  };
}
