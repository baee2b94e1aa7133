/**
 * The built-in protocols: each folder here holds a spec.json and its hooks.ts. `aigenora init` seeds
 * them into the local library under their protocol_id; `protocol create --from <alias>` copies one.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { STANDARD_BALANCE } from './hero-duel/hooks.js';
import { SHORT_MAP } from './tank-battle/hooks.js';

export interface Profile {
  description: string;
  options: Record<string, unknown>;
}

export interface BuiltinProtocol {
  alias: string;
  /** Folder under ts/protocols. */
  folder: string;
  tags: string[];
  capabilities: string[];
  default_profile: string;
  profiles: Record<string, Profile>;
}

export const BUILTIN_DIR = fileURLToPath(new URL('.', import.meta.url));

export const BUILTINS: BuiltinProtocol[] = [
  {
    alias: 'rps-v1',
    folder: 'rps',
    tags: ['game', 'rps', 'commit-reveal', 'timing'],
    capabilities: ['simultaneous_choice', 'commit_reveal', 'score_best_of', 'turn_timing'],
    default_profile: 'standard',
    profiles: {
      quick: { description: 'single round', options: { best_of: 1, termination: 'first_to_win', round_delay_seconds: 0 } },
      standard: { description: 'best of 3, first to 2', options: { best_of: 3, termination: 'first_to_win', round_delay_seconds: 0 } },
      long: { description: 'best of 5, first to 3', options: { best_of: 5, termination: 'first_to_win', round_delay_seconds: 0 } },
      marathon: { description: 'exactly 5 rounds, more wins takes it', options: { best_of: 5, termination: 'fixed_rounds', round_delay_seconds: 0 } },
    },
  },
  {
    alias: 'coin-flip-v1',
    folder: 'coin-flip',
    tags: ['game', 'coin-flip', 'commit-reveal'],
    capabilities: ['simultaneous_choice', 'commit_reveal', 'score_best_of'],
    default_profile: 'standard',
    profiles: { single: { description: 'one flip', options: { best_of: 1 } }, standard: { description: 'best of 3', options: { best_of: 3 } } },
  },
  {
    alias: 'weak-wins-all',
    folder: 'weak-wins-all',
    tags: ['game', 'weak-wins-all', 'timing'],
    capabilities: ['resource_allocation', 'multi_round_score', 'lower_bid_wins', 'commit_reveal', 'turn_timing'],
    default_profile: 'standard',
    profiles: {
      // The reference's profile as it ships: its options set no total_rounds, so it plays the default 5.
      quick: { description: '3 rounds, 50 points', options: { total_points: 50 } },
      standard: { description: '5 rounds, 100 points', options: { total_points: 100 } },
    },
  },
  {
    alias: 'guess-number-v1',
    folder: 'guess-number',
    tags: ['game', 'guess-number'],
    capabilities: ['secret_number', 'bounded_integer_guess', 'higher_lower_hint'],
    default_profile: 'standard',
    profiles: {
      easy: { description: 'range 1-50, 10 attempts', options: { range_min: 1, range_max: 50, max_attempts: 10 } },
      standard: { description: 'range 1-100, 7 attempts', options: { range_min: 1, range_max: 100, max_attempts: 7 } },
      hard: { description: 'range 1-200, 5 attempts', options: { range_min: 1, range_max: 200, max_attempts: 5 } },
    },
  },
  {
    alias: 'connect4-v1',
    folder: 'connect-four',
    tags: ['game', 'board', 'connect-four'],
    capabilities: ['turn_based', 'board_state', 'win_check'],
    default_profile: 'standard',
    profiles: {
      standard: { description: '7 columns x 6 rows', options: { cols: 7, rows: 6 } },
      small: { description: '5 x 4', options: { cols: 5, rows: 4 } },
    },
  },
  {
    alias: 'gomoku-v1',
    folder: 'gomoku',
    tags: ['game', 'gomoku', 'board'],
    capabilities: ['board_placement', 'five_in_a_row', 'session_loop'],
    default_profile: 'standard',
    profiles: {
      standard: { description: '15x15 standard board', options: { board_size: 15 } },
      small: { description: '9x9 quick game', options: { board_size: 9 } },
    },
  },
  {
    alias: 'reversi-v1',
    folder: 'reversi',
    tags: ['game', 'reversi', 'board'],
    capabilities: ['stone_flip', 'pass_when_no_move', 'session_loop'],
    default_profile: 'standard',
    profiles: {
      standard: { description: '8x8 standard board', options: { board_size: 8 } },
      small: { description: '6x6 quick game', options: { board_size: 6 } },
    },
  },
  {
    alias: 'human-chat-v1',
    folder: 'human-chat',
    tags: ['chat', 'human', 'p2p'],
    capabilities: ['free_form_chat', 'seq_ordered'],
    default_profile: 'standard',
    profiles: { standard: { description: 'free-form two-way chat', options: {} } },
  },
  {
    alias: 'qna-v1',
    folder: 'qna',
    tags: ['service', 'qna', 'request-response'],
    capabilities: ['single_exchange', 'topic_knowledge_base'],
    default_profile: 'standard',
    profiles: { standard: { description: 'one question, any topic', options: {} } },
  },
  {
    alias: 'hero-duel-v1',
    folder: 'hero-duel',
    tags: ['game', 'hero-duel', 'moba', 'balance'],
    capabilities: ['hero_duel', 'declarative_balance', 'simultaneous_damage', 'skill_cooldown', 'shadow_judge'],
    default_profile: 'standard',
    profiles: {
      standard: { description: 'four heroes (warrior, mage, assassin, tank), 30-round cap', options: { max_rounds: 30, balance: STANDARD_BALANCE } },
    },
  },
  {
    alias: 'crazy-eights-v1',
    folder: 'crazy-eights',
    tags: ['game', 'cards', 'crazy-eights', 'shedding'],
    capabilities: ['turn-based', 'mental-poker', 'draw', 'cheat-detectable'],
    default_profile: 'standard',
    profiles: {
      quick: { description: '3-card hand, fast', options: { hand_size: 3 } },
      standard: { description: '5-card hand', options: { hand_size: 5 } },
      long: { description: '7-card hand', options: { hand_size: 7 } },
    },
  },
  {
    alias: 'briscola-v1',
    folder: 'briscola',
    tags: ['game', 'cards', 'briscola', 'trick-taking'],
    capabilities: ['turn-based', 'mental-poker', 'trick-taking', 'cheat-detectable'],
    default_profile: 'standard',
    profiles: { standard: { description: '40-card deck, 3-card hands, 120-point game', options: {} } },
  },
  {
    alias: 'tank-battle-v1',
    folder: 'tank-battle',
    tags: ['game', 'tank-battle', 'rts', 'authoritative-realtime'],
    capabilities: ['authoritative_realtime', 'agent_micro_control', 'dynamic_rules', 'full_frame_journal'],
    default_profile: 'standard',
    profiles: {
      // The reference's three, and a 10-second duel for tests and CI.
      short: {
        description: '1v1 on a 9x9 arena, 100 ticks',
        options: { team_size: 1, max_ticks: 100, map_text: SHORT_MAP, pickup_mode: 'none', friendly_fire: false },
      },
      quick: { description: '3v3 short match without neutral powerups', options: { team_size: 3, max_ticks: 900, pickup_mode: 'none', friendly_fire: false } },
      standard: { description: '5v5 match with neutral powerups', options: { team_size: 5, max_ticks: 1800, pickup_mode: 'powerups', friendly_fire: false } },
      large: {
        description: '10v10 large battle with neutral powerups',
        options: { team_size: 10, max_ticks: 2400, pickup_mode: 'powerups', friendly_fire: false },
      },
    },
  },
  {
    alias: 'community-room-v1',
    folder: 'community-room',
    tags: ['chat', 'multiplayer', 'community-room', 'authoritative-group'],
    capabilities: ['authoritative_group', 'late_join', 'leader_failover', 'global_order'],
    default_profile: 'standard',
    profiles: { standard: { description: 'room with a 200-message history', options: { history_limit: 200, initial_topic: 'Community room' } } },
  },
  {
    alias: 'meeting-room-v1',
    folder: 'meeting-room',
    tags: ['meeting', 'multiplayer', 'agenda', 'vote', 'authoritative-group'],
    capabilities: ['authoritative_group', 'agenda', 'speaking_queue', 'private_ballots', 'leader_failover'],
    default_profile: 'standard',
    profiles: { standard: { description: 'working session, up to 20 agenda items', options: { meeting_title: 'Working session', max_agenda_items: 20 } } },
  },
  {
    alias: 'texas-holdem-v1',
    folder: 'texas-holdem',
    // The reference's, less its web UI (not shipped here).
    tags: ['game', 'cards', 'multiplayer', 'poker', 'holdem', 'private-hands'],
    capabilities: [
      'authoritative_group',
      'fixed_four_players',
      'shared_deck',
      'private_hands',
      'no_limit_betting',
      'side_pots',
      'showdown',
      'restart_round_recovery',
    ],
    default_profile: 'standard',
    profiles: {
      quick: { description: 'One 500-chip hand at 5/10 blinds', options: { starting_stack: 500, small_blind: 5, big_blind: 10, max_hands: 1 } },
      standard: { description: 'Eight 1,000-chip hands at 5/10 blinds', options: { starting_stack: 1000, small_blind: 5, big_blind: 10, max_hands: 8 } },
    },
  },
  {
    alias: 'four-player-landlord-v1',
    folder: 'landlord',
    tags: ['game', 'cards', 'multiplayer', 'landlord', 'private-hands', 'authoritative-group'],
    capabilities: ['authoritative_group', 'fixed_four_players', 'shared_deck', 'private_hands', 'team_scoring', 'restart_round_recovery'],
    default_profile: 'standard',
    profiles: { standard: { description: 'Two decks, 25 cards each, eight-card bottom', options: {} } },
  },
  {
    alias: 'aether-sigil-v1',
    folder: 'aether-sigil',
    // The reference's, less its web UI (not shipped here).
    tags: ['game', 'cards', 'multiplayer', 'shared-deck', 'private-hands', 'original'],
    capabilities: ['authoritative_group', 'fixed_four_players', 'shared_deck', 'private_hands', 'public_zones', 'restart_round_recovery'],
    default_profile: 'standard',
    profiles: {
      standard: { description: '20 life, 72-card shared pile', options: { starting_life: 20 } },
      long: { description: '30 life, 72-card shared pile', options: { starting_life: 30 } },
    },
  },
  {
    alias: 'upgrade-tractor-v1',
    folder: 'upgrade-tractor',
    // The reference's, less its web UI (not shipped here).
    tags: ['game', 'cards', 'multiplayer', 'upgrade', 'tractor', 'partnership', 'private-hands'],
    capabilities: [
      'authoritative_group',
      'fixed_four_players',
      'shared_deck',
      'private_hands',
      'partnership_scoring',
      'structured_tricks',
      'restart_round_recovery',
    ],
    default_profile: 'standard',
    profiles: {
      quick: { description: 'Short level race from 2 through 4', options: { start_level: 2, target_level: 4, max_hands: 8 } },
      standard: { description: 'Full level race from 2 through A', options: { start_level: 2, target_level: 14, max_hands: 16 } },
    },
  },
  {
    alias: 'contract-bridge-v1',
    folder: 'contract-bridge',
    // The reference's, less its web UI (not shipped here).
    tags: ['game', 'cards', 'multiplayer', 'bridge', 'partnership', 'private-hands'],
    capabilities: [
      'authoritative_group',
      'fixed_four_players',
      'shared_deck',
      'private_hands',
      'auction',
      'dummy_control',
      'duplicate_scoring',
      'restart_round_recovery',
    ],
    default_profile: 'standard',
    profiles: { standard: { description: 'One duplicate-scored board', options: { board_number: 1 } } },
  },
  {
    alias: 'classical-mahjong-v1',
    folder: 'classical-mahjong',
    // The reference's, less its web UI (not shipped here).
    tags: ['game', 'tiles', 'multiplayer', 'mahjong', 'shared-deck', 'private-hands'],
    capabilities: ['authoritative_group', 'fixed_four_players', 'shared_deck', 'private_hands', 'public_melds', 'claim_priority', 'restart_round_recovery'],
    default_profile: 'standard',
    profiles: {
      quick: { description: 'One hand with 25,000 starting points', options: { starting_points: 25000, max_hands: 1 } },
      standard: { description: 'Four hands with rotating dealer', options: { starting_points: 25000, max_hands: 4 } },
    },
  },
];

export function builtinDir(b: BuiltinProtocol): string {
  return join(BUILTIN_DIR, b.folder);
}

export function findBuiltin(aliasOrFolder: string): BuiltinProtocol | undefined {
  return BUILTINS.find((b) => b.alias === aliasOrFolder || b.folder === aliasOrFolder);
}
