/**
 * The authoritative_realtime message sequence, for the engine's FlowReplay: the guest's rt_join, the
 * host's rt_reject (nothing follows) or rt_ready, then guest rt_commands and host acks and frames in any
 * interleaving; whole once a frame's outcome is not "none". Guest commands sent before the guest saw
 * that frame may still arrive after it.
 */
import type { Message, Role } from '../hooks/types.js';

export type RealtimeFlowStep = { ok: true } | { ok: false; reason: string };

export class RealtimeFlow {
  private phase: 'join' | 'ready' | 'play' | 'done' | 'closed' = 'join';

  get complete(): boolean {
    return this.phase === 'done';
  }

  next(from: Role, msg: Message): RealtimeFlowStep {
    const what = `the ${from}'s ${msg.action}`;
    const refuse = (reason: string): RealtimeFlowStep => ({ ok: false, reason });
    switch (this.phase) {
      case 'closed':
        return refuse(`${what} follows the end of the session`);
      case 'join':
        if (from !== 'guest' || msg.action !== 'rt_join') return refuse(`the session starts with the guest's rt_join, not ${what}`);
        this.phase = 'ready';
        return { ok: true };
      case 'ready':
        if (from !== 'host') return refuse(`${what} before the host answered the rt_join`);
        if (msg.action === 'rt_reject') this.phase = 'closed';
        else if (msg.action === 'rt_ready') this.phase = 'play';
        else return refuse(`the host answers rt_join with rt_ready or rt_reject, not ${msg.action}`);
        return { ok: true };
      case 'done':
        if (from === 'guest' && msg.action === 'rt_command') return { ok: true };
        return refuse(`${what} follows the frame that ended the match`);
      case 'play':
        if (from === 'guest') return msg.action === 'rt_command' ? { ok: true } : refuse(`${what}: the guest sends only rt_command during play`);
        if (msg.action === 'rt_command_ack') return { ok: true };
        if (msg.action !== 'rt_frame') return refuse(`${what}: the host sends only rt_command_ack and rt_frame during play`);
        {
          const frame = msg['frame'];
          const outcome = typeof frame === 'object' && frame !== null ? (frame as Record<string, unknown>)['outcome'] : undefined;
          if (outcome !== 'none') this.phase = 'done';
        }
        return { ok: true };
    }
  }
}
