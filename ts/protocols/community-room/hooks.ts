/**
 * Community Room (authoritative_group): a chat room whose leader gives every message one global order.
 * The state is the reference's, field for field (topic, messages with ids, presence by public key, the
 * history limit clamped to 20..500), so the frames, checkpoints and views it produces are byte for byte
 * the reference's and a leader of either implementation can take over from the other's checkpoint.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { boundedText, codePointPrefix, intOption } from '../group-room.js';

interface Message {
  id: number;
  kind: 'message' | 'system';
  from: string;
  seat: number;
  text: string;
}
interface Presence {
  seat: number;
  status?: string;
}
interface RoomState extends GroupState {
  topic: string;
  messages: Message[];
  next_message_id: number;
  history_limit: number;
  presence: Record<string, Presence>;
  closed: boolean;
}

const room = (s: GroupState) => s as RoomState;

function trim(state: RoomState): void {
  const limit = Math.max(20, Math.min(500, intOption(state.history_limit, 200)));
  if (state.messages.length > limit) state.messages = state.messages.slice(-limit);
}

function appendSystem(state: RoomState, text: string): void {
  state.messages.push({ id: state.next_message_id, kind: 'system', from: '', seat: -1, text });
  state.next_message_id += 1;
  trim(state);
}

export default defineHooks(
  'authoritative_group',
  (ctx) => ({
    supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
    proto_host_metadata: () => ['Community Room', 'chat,multiplayer,community-room', 'chat', { history_limit: 200, initial_topic: 'Community room' }],

    proto_group_initial_state(members: GroupMember[]): GroupState {
      const topic = ctx.options['initial_topic'];
      const presence: Record<string, Presence> = {};
      for (const m of members) presence[m.public_key] = { seat: m.seat, status: 'online' };
      return {
        topic: codePointPrefix(topic ? String(topic) : 'Community room', 200),
        messages: [],
        next_message_id: 1,
        history_limit: intOption(ctx.options['history_limit'], 200),
        presence,
        closed: false,
      };
    },

    proto_group_member_joined(s: GroupState, member: GroupMember): GroupHookResult {
      const state = room(s);
      state.presence[member.public_key] = { seat: member.seat, status: 'online' };
      appendSystem(state, `Seat ${member.seat} joined the room`);
      return { state, events: [{ kind: 'member_joined', public_key: member.public_key, seat: member.seat }] };
    },

    proto_group_member_left(s: GroupState, member: GroupMember, reason: string): GroupHookResult {
      const state = room(s);
      const current = (state.presence[member.public_key] ??= { seat: member.seat });
      current.status = 'left';
      appendSystem(state, `Seat ${member.seat} left the room`);
      return { state, events: [{ kind: 'member_left', public_key: member.public_key, seat: member.seat, reason }] };
    },

    // No proto_group_timeout_action: a room has no turns, so a silent or departed member holds no one up
    // and the leader has nothing to resolve in its place.
    proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const state = room(s);
      const kind = action['kind'];
      if (kind === 'send') {
        const text = boundedText(action['text'], 2000, 'text');
        const message: Message = { id: state.next_message_id, kind: 'message', from: actor.public_key, seat: actor.seat, text };
        state.next_message_id += 1;
        state.messages.push(message);
        trim(state);
        return { state, events: [{ kind: 'message', message }] };
      }
      if (kind === 'set_topic') {
        const topic = boundedText(action['topic'], 200, 'topic');
        state.topic = topic;
        appendSystem(state, `Seat ${actor.seat} changed the topic`);
        return { state, events: [{ kind: 'topic_changed', topic, seat: actor.seat }] };
      }
      if (kind === 'close_room') {
        if (actor.seat !== 0) throw new Error('only the room owner at seat 0 can close the room');
        state.closed = true;
        appendSystem(state, 'The room was closed');
        return { state, events: [{ kind: 'room_closed', seat: actor.seat }], completed: true, outcome: 'closed' };
      }
      throw new Error('kind must be send, set_topic, or close_room');
    },

    proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
      const state = room(s);
      return {
        topic: state.topic,
        messages: state.messages,
        presence: state.presence,
        closed: state.closed,
        you: { public_key: viewer.public_key, seat: viewer.seat },
      };
    },

    proto_group_recovery_snapshot: (state: GroupState) => state,
    proto_group_restore: (checkpointState: GroupState) => checkpointState,

    proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
      const state = room(s);
      appendSystem(state, `Authority moved from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}`);
      return { state, events: [{ kind: 'leader_changed', old_leader: oldLeader, new_leader: newLeader }] };
    },
  }),
  autoplay,
);

const LINES = [
  'Hello, everyone.',
  'Good to see you all here.',
  'Any news this week?',
  'I posted the draft for review.',
  'Sounds good to me.',
  'Thanks, that helps.',
  'I can take that one.',
  'See you next time.',
];
const TOPICS = ['Weekly catch-up', 'Release planning', 'Open questions'];
/** How many messages an unattended member says before it has had its say. */
const SAYS = 2;

/**
 * The unattended member: says a couple of lines (now and then changing the topic instead), then waits.
 * Only the owner at seat 0 may close the room, so it does once every online member has had its say,
 * or once the history has been trimmed (ids start at 1), past which the view no longer shows who said what.
 */
export function autoplay(view: Record<string, unknown>, me: GroupMember, random: () => number): Record<string, unknown> | null {
  if (view['closed'] === true) return null;
  const messages = view['messages'] as Message[];
  const presence = view['presence'] as Record<string, Presence>;
  const said = new Map<string, number>();
  for (const m of messages) if (m.kind === 'message') said.set(m.from, (said.get(m.from) ?? 0) + 1);
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!;
  if (me.seat === 0) {
    const online = Object.keys(presence).filter((k) => presence[k]!.status === 'online');
    if ((messages[0]?.id ?? 1) > 1 || online.every((k) => (said.get(k) ?? 0) >= SAYS)) return { kind: 'close_room' };
  }
  if ((said.get(me.public_key) ?? 0) >= SAYS) return null;
  return random() < 0.1 ? { kind: 'set_topic', topic: pick(TOPICS) } : { kind: 'send', text: pick(LINES) };
}
