/**
 * The hook interface a protocol's local module implements, per flow mode, with the reference's hook
 * names (NOTES A12). The engine owns ordering, validation, commit-reveal, timing and termination;
 * hooks only decide moves and judge. Every message a hook receives has already passed the spec's
 * validator, and every message it returns is validated before it is sent.
 *
 * A hooks module (`hooks.mts`, or hooks.ts/.js/.mjs, beside spec.json) default-exports the result of
 * `defineHooks(mode, factory)`: the factory runs once per session, so a host and a guest in one process
 * never share state.
 */
import type { FlowMode } from '../spec/types.js';

/** A protocol message: a JSON object with its `action`. */
export type Message = { action: string } & Record<string, unknown>;

export interface HookResult<M extends Message = Message> {
  /** The message to send, or null/absent to send nothing. */
  response?: M | null;
  /** The session ends after this step, normally. */
  completed?: boolean;
  /** The session ends after this step, as aborted. */
  abort?: boolean;
}

/** A hook may return a HookResult or, as in the reference, a bare message (treated as `response`). */
export type HookReturn<M extends Message = Message> = HookResult<M> | M | null | undefined;
type Maybe<T> = T | Promise<T>;

export type Role = 'host' | 'guest';
export type ControlMode = 'autonomous' | 'hybrid' | 'human';

export interface DecisionConfig {
  mode: 'auto' | 'manual';
  control_mode: ControlMode;
  timeout_seconds: number;
  timeout_action: 'fallback' | 'abort';
  require_explicit?: boolean;
}

/** What the engine hands a hooks factory when a session starts. */
export interface HookContext {
  role: Role;
  /** Options after validation against spec.parameters (declared ones only drive rules). */
  options: Readonly<Record<string, unknown>>;
  /** Positional extra arguments (only when spec.decision.mode is manual). */
  args: readonly string[];
  stateDir: string;
  decision: DecisionConfig | null;
  /** A seeded source of randomness, so that `protocol test --seed N` is reproducible. */
  random(): number;
}

export interface CommonHooks {
  /** A local decision replaced the message the hooks suggested (hybrid/human control): resync any state about own moves. */
  proto_on_decision?(decided: Message, suggested: Message): Maybe<void>;
  proto_init?(options: Readonly<Record<string, unknown>>, role: Role, args: readonly string[], stateDir: string, decision: DecisionConfig | null): Maybe<void>;
  /** (display_name, comma-separated tags, invitation type, default options). */
  proto_host_metadata?(): [string, string, string, Record<string, unknown>];
  proto_display?(msg: Message, direction: 'sent' | 'received'): string | undefined;
  supported_control_modes?(): ControlMode[];
}

/** session_loop and request_response: join → ready, then strict ping-pong (request_response: one request, one response). */
export interface SessionLoopHooks extends CommonHooks {
  proto_host_handle_join(msg: Message): Maybe<HookReturn>;
  proto_host_handle(msg: Message): Maybe<HookReturn>;
  proto_guest_join_message(): Maybe<Message | null | undefined>;
  proto_guest_handle_ready(msg: Message): Maybe<HookReturn>;
  proto_guest_first_action(): Maybe<HookReturn>;
  proto_guest_handle(msg: Message): Maybe<HookReturn>;
}
export type RequestResponseHooks = SessionLoopHooks;

/** free: both sides send chat/end at will; invalid peer messages are dropped. */
export interface FreeHooks extends CommonHooks, HandshakeHooks {
  proto_on_message(msg: Message): Maybe<void>;
  proto_on_send(msg: Message): Maybe<void>;
  proto_on_end(): Maybe<void>;
}

/** The value a side commits to in a round, as the spec's value field holds it. */
export type RoundValue = string | number | boolean;

/** What the engine keeps for a simultaneous_round session and hands to the round hooks. */
export interface RoundState {
  /** The validated round_result messages so far, oldest first. */
  results: readonly Message[];
  /** The latest round_result, or null before the first. */
  last_result: Message | null;
  /** The host's ready message (it carries the agreed settings). */
  ready: Message | null;
}

/** The join/ready hooks every engine-driven mode may implement to add fields to the defaults. */
export interface HandshakeHooks {
  /** Guest: the join message (the engine sends {"action":"join"} if absent or empty). */
  proto_guest_join_message?(): Maybe<Message | null | undefined>;
  /** Host: the ready message for a validated join (the engine sends {"action":"ready"} if absent). */
  proto_host_handle_join?(msg: Message): Maybe<HookReturn>;
  /** Guest: the host's validated ready. */
  proto_guest_handle_ready?(msg: Message): Maybe<HookReturn>;
}

/** simultaneous_round: the engine runs commit → commit → reveal → reveal; the hooks choose and judge. */
export interface SimultaneousRoundHooks extends CommonHooks, HandshakeHooks {
  proto_round_value(roundIndex: number, state: RoundState): Maybe<RoundValue>;
  /** Host: the round_result message (response), and whether the game is over (completed). */
  proto_round_judge(roundIndex: number, hostValue: RoundValue, guestValue: RoundValue, state: RoundState): Maybe<HookReturn>;
  /** Side-effect-free judge the guest reruns when spec.shadow_judge is true: the round_result it expects. */
  proto_round_judge_pure?(roundIndex: number, hostValue: RoundValue, guestValue: RoundValue, state: RoundState): Message;
  /** The round_result fields the shadow judge compares (default: every field the pure judge sets). */
  proto_round_shadow_fields?(): string[];
}

/** A card as the deck universe lists it: [rank_index, suit_index], each 0..255 (one byte on the wire). */
export type MentalPokerCard = readonly [rank: number, suit: number];

/**
 * The deck ledger both sides keep in step, in id-B space ("0".."N-1", the Guest's shuffled positions),
 * never card faces. The engine moves cards stock → hand (deal, draw) and hand → played (a verified
 * play); hooks only read it.
 */
export interface MentalPokerDeckView {
  /** id-Bs not yet dealt or drawn. Draws take the lowest-index one, so no order is needed here. */
  readonly stock: ReadonlySet<string>;
  /** id-Bs played by either side so far (the nullifier set). */
  readonly played: ReadonlySet<string>;
  /** The id-Bs a side holds now: its own hand, or the peer's (whose faces stay hidden). */
  hand_of(who: Role): ReadonlySet<string>;
}

/**
 * What the mental_poker engine hands the hooks (the reference's injected `_mp_*` keys): live read-only
 * views of the local side's private knowledge, updated by the engine between hook calls.
 */
export interface MentalPokerState {
  readonly _mp_role: Role;
  /** The local hand as id-Bs (the same set as `_mp_deck_view.hand_of(_mp_role)`). */
  readonly _mp_hand: ReadonlySet<string>;
  /**
   * The local hand's faces, id-B → [rank, suit], in the order the cards were acquired (dealt, then
   * drawn), as the reference's dict keeps them: a strategy breaking ties by first-seen relies on it.
   * A played card leaves it when the play is applied.
   */
  readonly _mp_hand_cards: ReadonlyMap<string, MentalPokerCard>;
  readonly _mp_deck_view: MentalPokerDeckView;
  /** Set (true) once two consecutive passes ended the play loop; check_winner then applies the tie-break. */
  readonly _mp_stalled?: boolean;
}

/** A local turn's action. `call_suit` only with a play that declares a suit (a Crazy Eights 8). */
export type MentalPokerAction = { kind: 'play'; id_b: string; call_suit?: number } | { kind: 'draw' } | { kind: 'pass' };

/** One legal action for the local side as shown to a person choosing (never the peer's hidden cards). */
export type MentalPokerLegalAction =
  { kind: 'play'; id_b: string; rank: number; suit: number; call_suit_required?: boolean } | { kind: 'draw' } | { kind: 'pass' };

/** A peer's mp_play after the spec's validator and the engine's cryptographic play check passed. */
export type MentalPokerPlay = Message & { action: 'mp_play'; id_b: string; rank: number; suit: number; k_inner: string; k_outer: string; call_suit?: number };

/** A game's result: a winner, a draw (e.g. equal Briscola points), or null (no winner: a stalled tie). */
export type MentalPokerOutcome = Role | 'draw' | null;

/**
 * mental_poker (NOTES A16). The engine owns every mp_* message, the deck, the OTs and the audit; hooks
 * hold the game's own state (e.g. the card to follow, the current trick) and are called in this order:
 * - `proto_mp_deck_universe` (Host at setup, both sides at the audit): index i is the card labelled h-i.
 * - `proto_mp_initial_deal` on both sides before the deal (views not injected yet: a plan from options).
 * - each local turn: `proto_mp_legal_actions`, then EITHER `proto_mp_choose_action` (autonomous; it
 *   records its own play in the hooks' state before returning) OR, for an explicit person's decision,
 *   `proto_mp_coerce_action` (throws an Error whose message says why a decision is refused) followed by
 *   `proto_mp_apply_local_action` — never both paths for one turn.
 * - each peer play that passed the cryptographic check: `proto_mp_validate_play` once, before the deck
 *   view moves the card to `played`; [true, ''] means the hooks recorded the play, [false, reason]
 *   makes the engine send `{"action":"error","reason":"rule_rejected"}` and abort.
 * - after every turn (play, draw or pass, either side), with `_mp_stalled` set after a second
 *   consecutive pass: `proto_mp_check_winner` exactly once (it may advance game state, e.g. resolve a
 *   trick). A non-null result ends the play loop; so does a stall or two empty hands, with null.
 * The session result is `{completed: true, outcome, metadata}` with `outcome` the check_winner value
 * (or null) and `metadata` the 4-element `proto_host_metadata()` array (the Host reads it after
 * proto_init, the Guest at the end).
 */
export interface MentalPokerHooks extends CommonHooks {
  proto_mp_deck_universe(): MentalPokerCard[];
  proto_mp_initial_deal(state: Partial<MentalPokerState>): { host: number; guest: number };
  proto_mp_choose_action(state: MentalPokerState): Maybe<MentalPokerAction>;
  proto_mp_legal_actions?(state: MentalPokerState): MentalPokerLegalAction[];
  proto_mp_coerce_action?(state: MentalPokerState, decision: unknown): MentalPokerAction;
  proto_mp_apply_local_action?(state: MentalPokerState, action: MentalPokerAction): void;
  proto_mp_check_winner(state: MentalPokerState): MentalPokerOutcome;
  proto_mp_validate_play(state: MentalPokerState, who: Role, play: MentalPokerPlay): [ok: boolean, reason: string];
}

export interface RealtimeHooks extends CommonHooks {
  proto_realtime_initial_state(): Record<string, unknown>;
  proto_realtime_commands(state: Record<string, unknown>, targetTick: number): Maybe<unknown[]>;
  /** The commands as the host will apply them (aliases normalised); a throw rejects them with its message. */
  proto_realtime_validate_commands(side: Role, commands: unknown[], state: Record<string, unknown>, targetTick: number): unknown[];
  proto_realtime_step(
    state: Record<string, unknown>,
    tick: number,
    commands: { host: unknown[]; guest: unknown[] },
  ): { state: Record<string, unknown>; events?: Record<string, unknown>[]; outcome?: 'none' | Role | 'draw' };
  proto_realtime_snapshot?(state: Record<string, unknown>, frame: unknown): unknown;
  proto_realtime_audit_outcome?(frame: unknown): unknown;
  proto_realtime_transport_update?(profile: unknown): void;
}

/** A group member as the hooks see it (members are sorted by seat; public keys are lowercase hex). */
export interface GroupMember {
  member_id: string;
  public_key: string;
  seat: number;
  status: string;
}

/** The leader's authority state: a JSON object within the group limits (no floats). */
export type GroupState = Record<string, unknown>;

/** What a group hook returns; `direct` maps a member's public key to what only that member receives. */
export interface GroupHookResult {
  state: GroupState;
  events?: unknown[];
  direct?: Record<string, unknown>;
  completed?: boolean;
  outcome?: string | null;
}

/**
 * authoritative_group hooks run on the leader only and synchronously (the leader is a pure state
 * machine). The hooks that change state receive their own deep copy of it and may mutate and return
 * it; proto_group_view and proto_group_recovery_snapshot receive the committed state read-only (frozen:
 * they run once per member per frame, and copying the state for each would dominate the leader's cost).
 * A hook that refuses an action throws; its message becomes the refusal.
 */
export interface GroupHooks extends CommonHooks {
  proto_group_initial_state(members: GroupMember[]): GroupState;
  proto_group_member_joined(state: GroupState, member: GroupMember): GroupHookResult;
  proto_group_member_left(state: GroupState, member: GroupMember, reason: string): GroupHookResult;
  proto_group_handle(state: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult;
  /** The projection one member may see. */
  proto_group_view(state: GroupState, viewer: GroupMember): Record<string, unknown>;
  /** Directed side-channel routes (recipient public key → channel names) when peer routing is `hook`. */
  proto_group_peer_routes?(state: GroupState, viewer: GroupMember): Record<string, string[]>;
  /** The protocol state copied into checkpoints (default: the whole state). */
  proto_group_recovery_snapshot?(state: GroupState): GroupState;
  /** A new leader's state from a checkpoint's protocol_state (default: that state). */
  proto_group_restore?(checkpointState: GroupState, members: GroupMember[], newEpoch: number): GroupState;
  proto_group_on_leader_changed?(state: GroupState, oldLeader: string, newLeader: string): GroupHookResult;
  /**
   * What the leader does for `member` when the group waits on it and its turn deadline passes: the
   * action it takes in the member's place (run through proto_group_handle as the member's own would be,
   * in an ordinary frame), or null when the group is not waiting on this member. `reason` says whether
   * the member is still connected but silent, or disconnected. The leader asks after every frame (so
   * it must be cheap and read-only: it receives the committed, frozen state) to learn whose turn is
   * timed. Without it, no turn is ever timed out.
   */
  proto_group_timeout_action?(state: GroupState, member: GroupMember, reason: TurnTimeoutReason): Record<string, unknown> | null;
}

/** Why a member's turn is resolved by the leader: connected but silent past its deadline, or disconnected. */
export type TurnTimeoutReason = 'silent' | 'absent';

export interface HooksByMode {
  session_loop: SessionLoopHooks;
  request_response: RequestResponseHooks;
  free: FreeHooks;
  simultaneous_round: SimultaneousRoundHooks;
  mental_poker: MentalPokerHooks;
  authoritative_realtime: RealtimeHooks;
  authoritative_group: GroupHooks;
}

/**
 * How an autonomous group member picks its next action from its own verified view (never the leader's
 * state): the action to send, or null when it has nothing to do now (not its turn, or the game is over).
 * It runs on the member, so it must not assume anything the view does not say.
 */
export type GroupAutoplay = (view: Record<string, unknown>, me: GroupMember, random: () => number) => Record<string, unknown> | null;

/** What a narrator makes of one message: the lines a person reads, or nothing worth a line. */
export type Narration = string | readonly string[] | undefined;

/**
 * Tells a person following a two-party session (the CLI's progress lines) what one protocol message
 * did: the move, what it changed, the score. It is called with every protocol message of the session,
 * both sides' (`from`), in transcript order, each one already valid by the spec, so it may keep what
 * it needs across calls (a board, the trick in play, the cards left). It only reads: the session never
 * depends on it. The caller escapes and shortens every line, since peer text may be in it.
 */
export type Narrator = (msg: Message, from: Role) => Narration;

export interface HooksModule<M extends FlowMode = FlowMode> {
  mode: M;
  create(ctx: HookContext): HooksByMode[M];
  /** authoritative_group only: the player `protocol test` and unattended members use. */
  autoplay?: GroupAutoplay;
  /**
   * A fresh narrator for one session followed from side `me`. Without it the CLI prints each message's
   * declared fields from the spec.
   */
  narrator?(me: Role): Narrator;
}

/** Declares a protocol's hooks for one flow mode; the type checker then knows every hook's shape. */
export function defineHooks<M extends FlowMode>(
  mode: M,
  create: (ctx: HookContext) => HooksByMode[M],
  autoplay?: M extends 'authoritative_group' ? GroupAutoplay : never,
): HooksModule<M> {
  return autoplay ? { mode, create, autoplay } : { mode, create };
}

/** The hooks each flow mode requires (a skeleton generates exactly these) and the optional ones. */
export const HOOK_NAMES: Record<FlowMode, { required: string[]; optional: string[] }> = {
  session_loop: {
    required: [
      'proto_host_handle_join',
      'proto_host_handle',
      'proto_guest_join_message',
      'proto_guest_handle_ready',
      'proto_guest_first_action',
      'proto_guest_handle',
    ],
    optional: ['proto_on_decision', 'proto_init', 'proto_host_metadata', 'proto_display', 'supported_control_modes'],
  },
  request_response: {
    required: [
      'proto_host_handle_join',
      'proto_host_handle',
      'proto_guest_join_message',
      'proto_guest_handle_ready',
      'proto_guest_first_action',
      'proto_guest_handle',
    ],
    optional: ['proto_init', 'proto_host_metadata', 'proto_display', 'supported_control_modes'],
  },
  free: {
    required: ['proto_on_message', 'proto_on_send', 'proto_on_end'],
    optional: [
      'proto_guest_join_message',
      'proto_host_handle_join',
      'proto_guest_handle_ready',
      'proto_init',
      'proto_host_metadata',
      'proto_display',
      'supported_control_modes',
    ],
  },
  simultaneous_round: {
    required: ['proto_round_value', 'proto_round_judge'],
    optional: [
      'proto_round_judge_pure',
      'proto_round_shadow_fields',
      'proto_guest_join_message',
      'proto_host_handle_join',
      'proto_guest_handle_ready',
      'proto_init',
      'proto_host_metadata',
      'proto_display',
      'supported_control_modes',
    ],
  },
  mental_poker: {
    required: ['proto_mp_deck_universe', 'proto_mp_initial_deal', 'proto_mp_choose_action', 'proto_mp_check_winner', 'proto_mp_validate_play'],
    optional: [
      'proto_mp_legal_actions',
      'proto_mp_coerce_action',
      'proto_mp_apply_local_action',
      'proto_init',
      'proto_host_metadata',
      'proto_display',
      'supported_control_modes',
    ],
  },
  authoritative_realtime: {
    required: ['proto_realtime_initial_state', 'proto_realtime_commands', 'proto_realtime_validate_commands', 'proto_realtime_step'],
    optional: [
      'proto_realtime_snapshot',
      'proto_realtime_audit_outcome',
      'proto_realtime_transport_update',
      'proto_init',
      'proto_host_metadata',
      'proto_display',
      'supported_control_modes',
    ],
  },
  authoritative_group: {
    required: ['proto_group_initial_state', 'proto_group_member_joined', 'proto_group_member_left', 'proto_group_handle', 'proto_group_view'],
    optional: [
      'proto_group_peer_routes',
      'proto_group_recovery_snapshot',
      'proto_group_restore',
      'proto_group_on_leader_changed',
      'proto_group_timeout_action',
      'proto_init',
      'proto_host_metadata',
      'proto_display',
      'supported_control_modes',
    ],
  },
};

/** Normalises what a hook returned into a HookResult. */
export function toHookResult(r: HookReturn): HookResult {
  if (r === null || r === undefined) return {};
  if ('action' in r && typeof (r as Message).action === 'string') return { response: r as Message };
  return r as HookResult;
}
