/**
 * An unattended member's next Upgrade action, chosen at random among legal ones from its own view only:
 * pass or declare (a stronger declaration than the current one), bury eight cards other than the
 * winning declaration's, lead a single, pair, tractor or a small throw, and follow within the
 * reference's obligations (exhaust the led effective suit, keep the pairs and the tractor it asks for).
 */
import type { GroupMember } from '../../hooks/types.js';
import type { Card, UpgradeView } from './hooks.js';
import { effectiveSuit, hasTractor, pairCount, pairPosition, type Shape, type TrumpContext } from './tractor.js';

type Action = Record<string, unknown>;

const faceOf = (c: Card) => `${c.suit}:${c.rank}`;

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Each face held twice, as [id, id]. */
function pairsIn(cards: readonly Card[]): [string, string][] {
  const byFace = new Map<string, string[]>();
  for (const c of cards) byFace.set(faceOf(c), [...(byFace.get(faceOf(c)) ?? []), c.card_id]);
  return [...byFace.values()].filter((ids) => ids.length >= 2).map((ids) => [ids[0]!, ids[1]!]);
}

/** The ids of `length` consecutive pairs of `category` in `cards`, or null. */
function findTractor(cards: readonly Card[], length: number, category: string, ctx: TrumpContext): string[] | null {
  const pairs = pairsIn(cards).map((ids) => {
    const card = cards.find((c) => c.card_id === ids[0])!;
    return { ids, position: pairPosition([card.suit, card.rank], ctx, category) };
  });
  pairs.sort((a, b) => a.position - b.position);
  for (let start = 0; start < pairs.length; start++) {
    const run = [pairs[start]!];
    for (let i = start + 1; i < pairs.length && run.length < length; i++) {
      if (pairs[i]!.position === run.at(-1)!.position + 1) run.push(pairs[i]!);
      else if (pairs[i]!.position !== run.at(-1)!.position) break;
    }
    if (run.length === length) return run.flatMap((p) => p.ids);
  }
  return null;
}

function declare(view: UpgradeView, random: () => number): Action {
  const current = view.winning_declaration?.strength ?? 0;
  const options: string[][] = [];
  for (const c of view.my_hand) if (c.rank === view.level_rank && c.suit !== 'joker' && current < 1) options.push([c.card_id]);
  for (const [a, b] of pairsIn(view.my_hand)) {
    const c = view.my_hand.find((x) => x.card_id === a)!;
    const strength = c.suit === 'joker' ? c.rank - 13 : c.rank === view.level_rank ? 2 : 0;
    if (strength > current) options.push([a, b]);
  }
  if (!options.length || random() < 0.5) return { kind: 'pass_declare' };
  return { kind: 'declare_trump', card_ids: options[Math.floor(random() * options.length)]! };
}

function lead(hand: readonly Card[], ctx: TrumpContext, random: () => number): string[] {
  const roll = random();
  const bySuit = new Map<string, Card[]>();
  for (const c of hand) bySuit.set(effectiveSuit(c, ctx), [...(bySuit.get(effectiveSuit(c, ctx)) ?? []), c]);
  const suits = shuffled([...bySuit.entries()], random);
  if (roll < 0.3) {
    for (const [suit, cards] of suits) {
      const tractor = findTractor(cards, 2, suit, ctx);
      if (tractor) return tractor;
    }
  }
  if (roll < 0.55) {
    const pairs = suits.flatMap(([, cards]) => pairsIn(cards));
    if (pairs.length) return pairs[Math.floor(random() * pairs.length)]!;
  }
  const [, sameSuit] = suits[0]!;
  if (roll > 0.9 && sameSuit.length >= 2)
    return shuffled(sameSuit, random)
      .slice(0, 2 + Math.floor(random() * Math.min(3, sameSuit.length - 1)))
      .map((c) => c.card_id);
  return [sameSuit[Math.floor(random() * sameSuit.length)]!.card_id];
}

/** A follow to `lead` from `hand` within the obligations (the led suit first, then its pairs and tractor), chosen by `random`. */
export function follow(hand: readonly Card[], lead: Shape, ctx: TrumpContext, random: () => number): string[] {
  const count = lead.count;
  const inSuit = hand.filter((c) => effectiveSuit(c, ctx) === lead.suit);
  if (inSuit.length <= count) {
    const rest = shuffled(
      hand.filter((c) => !inSuit.includes(c)),
      random,
    );
    return [...inSuit, ...rest.slice(0, count - inSuit.length)].map((c) => c.card_id);
  }
  if (lead.kind === 'tractor' && hasTractor(inSuit, lead.tractor_length!, lead.suit, ctx)) return findTractor(inSuit, lead.tractor_length!, lead.suit, ctx)!;
  const needed = Math.min(lead.pair_count, pairCount(inSuit));
  const chosen = shuffled(pairsIn(inSuit), random).slice(0, needed).flat();
  const rest = shuffled(
    inSuit.filter((c) => !chosen.includes(c.card_id)),
    random,
  );
  return [...chosen, ...rest.slice(0, count - chosen.length).map((c) => c.card_id)];
}

/** The member's next action from its own view, or null when it has nothing to do. */
export function chooseAction(view: UpgradeView, me: GroupMember, random: () => number): Action | null {
  const key = me.public_key;
  if (view.phase === 'completed') return null;
  if (view.phase === 'declaration') return Object.hasOwn(view.declarations, key) ? null : declare(view, random);
  if (view.current_player !== key) return null;
  if (view.phase === 'bury') {
    const kept = new Set(view.winning_declaration?.card_ids ?? []);
    return {
      kind: 'bury',
      card_ids: shuffled(
        view.my_hand.filter((c) => !kept.has(c.card_id)),
        random,
      )
        .slice(0, 8)
        .map((c) => c.card_id),
    };
  }
  if (view.phase !== 'playing') return null;
  const ctx: TrumpContext = { level_rank: view.level_rank, trump_suit: view.trump_suit };
  const ledBy = view.current_trick[0];
  return { kind: 'play', card_ids: ledBy ? follow(view.my_hand, ledBy.shape, ctx, random) : lead(view.my_hand, ctx, random) };
}
