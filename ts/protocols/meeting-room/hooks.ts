/**
 * Meeting Room (authoritative_group): an agenda, a speaking queue, votes and action items, run by a
 * facilitator (initially the lowest seat). The state and views are the reference's, field for field,
 * so both implementations produce the same frames; a member's view shows vote counts and only its own
 * ballot.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState, type TurnTimeoutReason } from '../../hooks/types.js';
import { boundedText, codePointPrefix, intOption, isInt } from '../group-room.js';

interface AgendaItem {
  id: number;
  text: string;
  created_by: string;
  status: 'pending' | 'active' | 'done';
}
interface Vote {
  id: number;
  question: string;
  choices: string[];
  ballots: Record<string, number>;
  status: string;
  counts?: number[];
}
interface ActionItem {
  id: number;
  text: string;
  assignee: string;
  created_by: string;
  done: boolean;
}
interface MeetingState extends GroupState {
  title: string;
  facilitator: string;
  members: Record<string, { seat: number; status?: string }>;
  agenda: AgendaItem[];
  active_agenda: number;
  speaking_queue: string[];
  active_speaker: string;
  vote: Vote | null;
  vote_history: Vote[];
  action_items: ActionItem[];
  next_id: number;
  ended: boolean;
}

const meeting = (s: GroupState) => s as MeetingState;

function nextId(state: MeetingState): number {
  const id = state.next_id;
  state.next_id += 1;
  return id;
}

function requireFacilitator(state: MeetingState, actor: GroupMember): void {
  if (actor.public_key !== state.facilitator) throw new Error('this action requires the meeting facilitator');
}

function isActiveMember(state: MeetingState, publicKey: unknown): publicKey is string {
  if (typeof publicKey !== 'string' || !Object.hasOwn(state.members, publicKey)) return false;
  const m = state.members[publicKey];
  return typeof m === 'object' && m !== null && m.status === 'active';
}

function advanceSpeaker(state: MeetingState): void {
  if (!state.active_speaker && state.speaking_queue.length > 0) state.active_speaker = state.speaking_queue.shift() as string;
}

function counts(vote: Vote): number[] {
  const c = vote.choices.map(() => 0);
  for (const choice of Object.values(vote.ballots)) c[choice] = (c[choice] ?? 0) + 1;
  return c;
}

export default defineHooks(
  'authoritative_group',
  (ctx) => ({
    supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
    proto_host_metadata: () => ['Meeting Room', 'meeting,multiplayer,agenda,vote', 'chat', { meeting_title: 'Working session', max_agenda_items: 20 }],

    proto_group_initial_state(members: GroupMember[]): GroupState {
      if (members.length === 0) throw new Error('a meeting needs at least one member');
      const facilitator = members.reduce((a, b) => (b.seat < a.seat ? b : a));
      const title = ctx.options['meeting_title'];
      const byKey: MeetingState['members'] = {};
      for (const m of members) byKey[m.public_key] = { seat: m.seat, status: m.status ?? 'active' };
      return {
        title: codePointPrefix(title ? String(title) : 'Working session', 200),
        facilitator: facilitator.public_key,
        members: byKey,
        agenda: [],
        active_agenda: -1,
        speaking_queue: [],
        active_speaker: '',
        vote: null,
        vote_history: [],
        action_items: [],
        next_id: 1,
        ended: false,
      };
    },

    proto_group_member_joined(s: GroupState, member: GroupMember): GroupHookResult {
      const state = meeting(s);
      state.members[member.public_key] = { seat: member.seat, status: 'active' };
      return { state, events: [{ kind: 'member_joined', public_key: member.public_key, seat: member.seat }] };
    },

    proto_group_member_left(s: GroupState, member: GroupMember, reason: string): GroupHookResult {
      const state = meeting(s);
      const pk = member.public_key;
      (state.members[pk] ??= { seat: member.seat }).status = 'left';
      state.speaking_queue = state.speaking_queue.filter((item) => item !== pk);
      if (state.active_speaker === pk) {
        state.active_speaker = '';
        advanceSpeaker(state);
      }
      return { state, events: [{ kind: 'member_left', public_key: pk, reason }] };
    },

    // The floor is the only turn a meeting has. A speaker who is still connected keeps it however long it
    // talks (speaking is not an action); one whose connection is gone yields it past the deadline, so the
    // queue moves on. Votes, the agenda and the facilitator's duties wait on no one.
    proto_group_timeout_action(s: GroupState, member: GroupMember, reason: TurnTimeoutReason): Record<string, unknown> | null {
      const state = meeting(s);
      return reason === 'absent' && !state.ended && state.active_speaker === member.public_key ? { kind: 'yield_speaker' } : null;
    },

    proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const state = meeting(s);
      const events: Record<string, unknown>[] = [];
      switch (action['kind']) {
        case 'add_agenda': {
          if (state.agenda.length >= intOption(ctx.options['max_agenda_items'], 20)) throw new Error('agenda is full');
          const text = boundedText(action['text'], 500, 'text');
          const item: AgendaItem = { id: nextId(state), text, created_by: actor.public_key, status: 'pending' };
          state.agenda.push(item);
          if (state.active_agenda < 0) {
            state.active_agenda = 0;
            item.status = 'active';
          }
          events.push({ kind: 'agenda_added', item });
          break;
        }
        case 'advance_agenda': {
          requireFacilitator(state, actor);
          const current = state.active_agenda;
          if (current >= 0 && current < state.agenda.length) state.agenda[current]!.status = 'done';
          const next = current + 1;
          state.active_agenda = next < state.agenda.length ? next : -1;
          if (state.active_agenda >= 0) state.agenda[state.active_agenda]!.status = 'active';
          events.push({ kind: 'agenda_advanced', active_agenda: state.active_agenda });
          break;
        }
        case 'request_to_speak': {
          const pk = actor.public_key;
          if (state.active_speaker !== pk && !state.speaking_queue.includes(pk)) state.speaking_queue.push(pk);
          advanceSpeaker(state);
          events.push({ kind: 'speaking_queue_changed', active_speaker: state.active_speaker, queue: state.speaking_queue });
          break;
        }
        case 'yield_speaker': {
          if (state.active_speaker !== actor.public_key) throw new Error('only the active speaker can yield');
          state.active_speaker = '';
          advanceSpeaker(state);
          events.push({ kind: 'speaker_yielded', active_speaker: state.active_speaker });
          break;
        }
        case 'open_vote': {
          requireFacilitator(state, actor);
          if (state.vote !== null) throw new Error('a vote is already open');
          const question = boundedText(action['question'], 500, 'question');
          const choices = action['choices'];
          if (!Array.isArray(choices) || choices.length < 2 || choices.length > 6) throw new Error('choices must contain 2-6 items');
          const clean = choices.map((c) => boundedText(c, 100, 'choice'));
          state.vote = { id: nextId(state), question, choices: clean, ballots: {}, status: 'open' };
          events.push({ kind: 'vote_opened', vote: state.vote });
          break;
        }
        case 'cast_vote': {
          const vote = state.vote;
          if (vote === null || typeof vote !== 'object' || vote.status !== 'open') throw new Error('no vote is open');
          const choice = action['choice'];
          if (!isInt(choice) || choice < 0 || choice >= vote.choices.length) throw new Error('choice is out of range');
          vote.ballots[actor.public_key] = choice;
          events.push({ kind: 'vote_cast', public_key: actor.public_key, choice });
          break;
        }
        case 'close_vote': {
          requireFacilitator(state, actor);
          const vote = state.vote;
          if (vote === null || typeof vote !== 'object') throw new Error('no vote is open');
          const closed: Vote = { ...vote, status: 'closed', counts: counts(vote) };
          state.vote_history.push(closed);
          state.vote = null;
          events.push({ kind: 'vote_closed', vote: closed });
          break;
        }
        case 'add_action_item': {
          const text = boundedText(action['text'], 500, 'text');
          const assignee = action['assignee'] || actor.public_key;
          if (!isActiveMember(state, assignee)) throw new Error('assignee must be a member public key');
          const item: ActionItem = { id: nextId(state), text, assignee, created_by: actor.public_key, done: false };
          state.action_items.push(item);
          events.push({ kind: 'action_item_added', item });
          break;
        }
        case 'complete_action_item': {
          const itemId = action['item_id'];
          if (!isInt(itemId)) throw new Error('item_id must be an integer');
          const item = state.action_items.find((i) => i.id === itemId);
          if (!item) throw new Error('item does not exist');
          if (actor.public_key !== state.facilitator && actor.public_key !== item.assignee) throw new Error('only the facilitator or assignee can complete it');
          item.done = true;
          events.push({ kind: 'action_item_completed', item_id: item.id });
          break;
        }
        case 'transfer_facilitator': {
          requireFacilitator(state, actor);
          const target = action['public_key'];
          if (!isActiveMember(state, target)) throw new Error('public_key must identify an active member');
          state.facilitator = target;
          events.push({ kind: 'facilitator_transferred', public_key: target });
          break;
        }
        case 'end_meeting': {
          requireFacilitator(state, actor);
          state.ended = true;
          events.push({ kind: 'meeting_ended' });
          return { state, events, completed: true, outcome: 'ended' };
        }
        default:
          throw new Error('unsupported meeting action');
      }
      return { state, events };
    },

    proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
      const state = meeting(s);
      const vote = state.vote;
      const publicVote =
        vote !== null && typeof vote === 'object'
          ? {
              id: vote.id,
              question: vote.question,
              choices: vote.choices,
              counts: counts(vote),
              ballot_count: Object.keys(vote.ballots).length,
              my_choice: Object.hasOwn(vote.ballots, viewer.public_key) ? vote.ballots[viewer.public_key] : null,
              status: vote.status,
            }
          : null;
      return {
        title: state.title,
        facilitator: state.facilitator,
        members: state.members,
        agenda: state.agenda,
        active_agenda: state.active_agenda,
        speaking_queue: state.speaking_queue,
        active_speaker: state.active_speaker,
        vote: publicVote,
        vote_history: state.vote_history,
        action_items: state.action_items,
        ended: state.ended,
        you: { public_key: viewer.public_key, seat: viewer.seat, is_facilitator: viewer.public_key === state.facilitator },
      };
    },

    proto_group_recovery_snapshot: (state: GroupState) => state,
    proto_group_restore: (checkpointState: GroupState) => checkpointState,

    proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
      const state = meeting(s);
      return { state, events: [{ kind: 'network_leader_changed', old_leader: oldLeader, new_leader: newLeader, facilitator: state.facilitator }] };
    },
  }),
  autoplay,
);

const AGENDA = ['Status round', 'Release planning', 'Budget review'];
const QUESTIONS = ['Ship the release this week?', 'Adopt the new schedule?', 'Keep the current plan?'];
const ITEMS = ['Write up the notes', 'Review the draft', 'Update the schedule', 'Ask the other team'];

/**
 * The unattended member, from its own view. Everyone takes the floor once (its turn leaves an action
 * item it owns, then it yields), votes once on the open question and may mark its own item done. The
 * facilitator, the only member who may end the meeting, sets one agenda item, opens the vote, closes it
 * when every active member has voted, and once everyone has spoken and the floor is free finishes the
 * agenda and ends the meeting.
 */
export function autoplay(view: Record<string, unknown>, me: GroupMember, random: () => number): Record<string, unknown> | null {
  if (view['ended'] === true) return null;
  const key = me.public_key;
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!;
  const items = view['action_items'] as ActionItem[];
  const vote = view['vote'] as { choices: string[]; ballot_count: number; my_choice: number | null } | null;
  const queue = view['speaking_queue'] as string[];
  const members = view['members'] as MeetingState['members'];
  const active = Object.keys(members).filter((k) => members[k]!.status === 'active');
  const hasSpoken = (k: string) => items.some((i) => i.created_by === k);

  if (view['active_speaker'] === key) return hasSpoken(key) ? { kind: 'yield_speaker' } : { kind: 'add_action_item', text: pick(ITEMS) };
  if (vote && vote.my_choice === null) return { kind: 'cast_vote', choice: Math.floor(random() * vote.choices.length) };
  const facilitator = view['facilitator'] === key;
  if (facilitator) {
    if ((view['agenda'] as AgendaItem[]).length === 0) return { kind: 'add_agenda', text: pick(AGENDA) };
    if (!vote && (view['vote_history'] as Vote[]).length === 0) return { kind: 'open_vote', question: pick(QUESTIONS), choices: ['yes', 'no', 'later'] };
    if (vote && vote.ballot_count >= active.length) return { kind: 'close_vote' };
  }
  if (!hasSpoken(key) && !queue.includes(key)) return { kind: 'request_to_speak' };
  const mine = items.find((i) => i.assignee === key && !i.done);
  if (mine && random() < 0.5) return { kind: 'complete_action_item', item_id: mine.id };
  if (facilitator && !vote && !view['active_speaker'] && queue.length === 0 && active.every(hasSpoken)) {
    return (view['active_agenda'] as number) >= 0 ? { kind: 'advance_agenda' } : { kind: 'end_meeting' };
  }
  return null;
}
