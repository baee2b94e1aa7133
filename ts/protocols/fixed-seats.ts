/**
 * The seats of the four-seat card tables, fixed for the match: a table deals to its four active members
 * in seat order; a member who leaves keeps its seat and what it holds, and one who comes back resumes (the
 * state is the same either way: the table is only told, in the reference's events).
 */
import type { GroupHookResult, GroupMember, GroupState } from '../hooks/types.js';

/** The active members in seat order; any number but four is refused in the reference's words, `game` naming the game. */
export function fourActiveMembers<M extends { status?: string; seat: number }>(members: readonly M[], game: string): M[] {
  const active = members.filter((m) => m.status === 'active').sort((a, b) => a.seat - b.seat);
  if (active.length !== 4) throw new Error(`${game} requires exactly four active Members`);
  return active;
}

export const fixedSeats = {
  proto_group_member_joined(state: GroupState, member: GroupMember): GroupHookResult {
    return { state, events: [{ kind: 'member_rejoined', public_key: member.public_key, seat: member.seat }] };
  },

  proto_group_member_left(state: GroupState, member: GroupMember, reason: string): GroupHookResult {
    return { state, events: [{ kind: 'member_disconnected', public_key: member.public_key, reason }] };
  },
};
