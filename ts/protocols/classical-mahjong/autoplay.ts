/**
 * An unattended Mahjong member: it reads only its own view (its hand, the public melds, the discard on
 * the table) and answers with a legal action. It wins whenever its tiles allow, takes melds at random,
 * and otherwise discards a tile that leaves its hand closest to a standard win (ties broken at random).
 * Because it always takes a win it is offered, a hand it completes by claiming a pung or chow is never a
 * win yet, so it never declares a self-draw win before drawing (which the rules refuse).
 */
import type { GroupMember } from '../../hooks/types.js';
import type { MahjongView, Tile } from './hooks.js';
import { chowSequences, codeIndex, codeSuit, winKind } from './tiles.js';

/** Distance from a standard win (pungs and chows around a pair): 0 = one tile away, -1 = complete. */
export function shanten(tiles: readonly Tile[], meldCount: number): number {
  const c = new Array<number>(34).fill(0);
  for (const t of tiles) c[codeIndex(t.code)]! += 1;
  const suited = (i: number) => i < 27;
  const rankOf = (i: number) => (i % 9) + 1;
  let best = 8;
  const walk = (from: number, melds: number, partials: number, pair: boolean) => {
    let i = from;
    while (i < 34 && c[i] === 0) i++;
    if (i >= 34) {
      const m = melds + meldCount;
      best = Math.min(best, 8 - 2 * m - Math.min(partials, 4 - m) - (pair ? 1 : 0));
      return;
    }
    const use = (cells: number[], m: number, p: number, hasPair: boolean) => {
      for (const x of cells) c[x]! -= 1;
      walk(i, m, p, hasPair);
      for (const x of cells) c[x]! += 1;
    };
    if (c[i]! >= 3) use([i, i, i], melds + 1, partials, pair);
    const inRun = (k: number) => suited(i) && rankOf(i) + k <= 9 && c[i + k]! > 0;
    if (inRun(1) && inRun(2)) use([i, i + 1, i + 2], melds + 1, partials, pair);
    if (c[i]! >= 2) {
      if (!pair) use([i, i], melds, partials, true);
      use([i, i], melds, partials + 1, pair);
    }
    if (inRun(1)) use([i, i + 1], melds, partials + 1, pair);
    if (inRun(2)) use([i, i + 2], melds, partials + 1, pair);
    use([i], melds, partials, pair);
  };
  walk(0, 0, 0, false);
  return best;
}

const pickOne = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)]!;
const idsOf = (hand: readonly Tile[], code: string, n: number) =>
  hand
    .filter((t) => t.code === code)
    .slice(0, n)
    .map((t) => t.card_id);

function chooseDiscard(hand: readonly Tile[], meldCount: number, random: () => number): string {
  let best = Infinity;
  let choices: Tile[] = [];
  const seen = new Set<string>();
  for (const tile of hand) {
    if (seen.has(tile.code)) continue;
    seen.add(tile.code);
    const rest = hand.filter((t) => t !== tile);
    const score = shanten(rest, meldCount);
    if (score < best) [best, choices] = [score, [tile]];
    else if (score === best) choices.push(tile);
  }
  return pickOne(choices, random).card_id;
}

export function autoplay(raw: Record<string, unknown>, me: GroupMember, random: () => number): Record<string, unknown> | null {
  const view = raw as MahjongView;
  const key = me.public_key;
  const hand = view.my_hand;
  const melds = view.melds[key] ?? [];
  if (view.phase === 'discard' && view.current_player === key) {
    if (winKind(hand, melds.length) !== null) return { kind: 'win' };
    const counts = new Map<string, number>();
    for (const t of hand) counts.set(t.code, (counts.get(t.code) ?? 0) + 1);
    const four = [...counts].filter(([, n]) => n === 4).map(([code]) => code);
    if (four.length && random() < 0.7) return { kind: 'concealed_kong', card_ids: idsOf(hand, pickOne(four, random), 4) };
    return { kind: 'discard', card_id: chooseDiscard(hand, melds.length, random) };
  }
  if (view.phase !== 'claim' || !view.you.may_claim || view.my_claim !== null || !view.last_discard) return null;
  const discard = view.last_discard.card;
  if (winKind([...hand, discard], melds.length) !== null) return { kind: 'win' };
  const same = hand.filter((t) => t.code === discard.code).length;
  if (same >= 3 && random() < 0.5) return { kind: 'kong', card_ids: idsOf(hand, discard.code, 3) };
  if (same >= 2 && random() < 0.5) return { kind: 'pung', card_ids: idsOf(hand, discard.code, 2) };
  const order = view.turn_order;
  const next = order[(order.indexOf(view.last_discard.public_key) + 1) % order.length];
  if (next === key && codeSuit(discard.code) !== 'honor' && random() < 0.4) {
    const runs = chowSequences(hand, discard);
    if (runs.length) return { kind: 'chow', card_ids: pickOne(runs, random).map((code) => idsOf(hand, code, 1)[0]!) };
  }
  return { kind: 'pass_claim' };
}
