/**
 * Four-player Landlord's card rules, as the reference's hooks define them: the two-deck faces, which
 * card sets are a supported combination, and which combination beats which. Pure functions on faces.
 */

export type ComboKind =
  | 'single'
  | 'pair'
  | 'triple'
  | 'triple_single'
  | 'triple_pair'
  | 'straight'
  | 'pair_straight'
  | 'airplane'
  | 'airplane_single'
  | 'airplane_pair'
  | 'four_two_single'
  | 'four_two_pair'
  | 'bomb'
  | 'joker_bomb';

/** tier 0 = a normal play, 1 = a same-rank bomb, 2 = a joker bomb. */
export interface Combination {
  kind: ComboKind;
  primary: number;
  length: number;
  tier: number;
}

export const NOT_A_COMBINATION = 'the selected cards are not a supported combination';

const RANKS: [string, number][] = [
  ['3', 3],
  ['4', 4],
  ['5', 5],
  ['6', 6],
  ['7', 7],
  ['8', 8],
  ['9', 9],
  ['10', 10],
  ['J', 11],
  ['Q', 12],
  ['K', 13],
  ['A', 14],
  ['2', 15],
];

/** One 54-card deck's faces in the reference's order (suits, then ranks 3..2, then the jokers); the face index feeds card ids. */
export function cardFaces(): CardFace[] {
  const faces: CardFace[] = [];
  for (const suit of ['clubs', 'diamonds', 'hearts', 'spades']) for (const [rank, value] of RANKS) faces.push({ rank, value, suit });
  faces.push({ rank: 'Black Joker', value: 16, suit: 'joker' }, { rank: 'Red Joker', value: 17, suit: 'joker' });
  return faces;
}

const consecutive = (sorted: number[]) => sorted.every((v, i) => i === 0 || v === sorted[i - 1]! + 1);

/** The combination a set of cards forms, or an Error with the reference's text. */
export function classify(cards: readonly CardFace[]): Combination {
  const values = cards.map((c) => c.value);
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const countValues = [...counts.values()].sort((a, b) => a - b).join(',');
  const size = cards.length;
  const combo = (kind: ComboKind, primary: number, tier = 0): Combination => ({ kind, primary, length: size, tier });
  const jokers = cards.filter((c) => c.suit === 'joker').length;
  if (jokers === size && size >= 2) return combo('joker_bomb', Math.max(...values), 2);
  if (counts.size === 1 && size >= 4) return combo('bomb', values[0]!, 1);
  if (size === 1) return combo('single', values[0]!);
  if (size === 2 && countValues === '2') return combo('pair', values[0]!);
  if (size === 3 && countValues === '3') return combo('triple', values[0]!);
  const rankWith = (n: number) => [...counts].find(([, c]) => c === n)![0];
  if (size === 4 && countValues === '1,3') return combo('triple_single', rankWith(3));
  if (size === 5 && countValues === '2,3') return combo('triple_pair', rankWith(3));
  const ordered = [...counts.keys()].sort((a, b) => a - b);
  const all = (n: number) => [...counts.values()].every((c) => c === n);
  if (size >= 5 && all(1) && ordered.at(-1)! <= 14 && consecutive(ordered)) return combo('straight', ordered.at(-1)!);
  if (size >= 6 && size % 2 === 0 && all(2) && ordered.at(-1)! <= 14 && consecutive(ordered)) return combo('pair_straight', ordered.at(-1)!);
  // An airplane's body is every rank held exactly three times below the 2s; they must all be consecutive.
  const triples = ordered.filter((v) => counts.get(v) === 3 && v <= 14);
  if (triples.length >= 2 && consecutive(triples)) {
    const wings = [...counts].filter(([v]) => !triples.includes(v)).map(([, c]) => c);
    const t = triples.length;
    let kind: ComboKind | '' = '';
    if (size === t * 3 && !wings.length) kind = 'airplane';
    else if (size === t * 4 && wings.length === t && wings.every((c) => c === 1)) kind = 'airplane_single';
    else if (size === t * 5 && wings.length === t && wings.every((c) => c === 2)) kind = 'airplane_pair';
    if (kind) return combo(kind, triples.at(-1)!);
  }
  const fours = [...counts].filter(([, c]) => c === 4).map(([v]) => v);
  if (fours.length === 1) {
    const rest = [...counts].filter(([v]) => v !== fours[0]).map(([, c]) => c);
    // "Two singles" is any two other cards, a pair included, as in the reference.
    if (size === 6 && rest.reduce((a, b) => a + b, 0) === 2) return combo('four_two_single', fours[0]!);
    if (size === 8 && rest.length === 2 && rest.every((c) => c === 2)) return combo('four_two_pair', fours[0]!);
  }
  throw new Error(NOT_A_COMBINATION);
}

/** Whether `candidate` may follow `previous`: a higher tier always; bombs by size then rank; normal plays by kind, size and rank. */
export function beats(candidate: Combination, previous: Combination): boolean {
  if (candidate.tier !== previous.tier) return candidate.tier > previous.tier;
  if (candidate.tier > 0) return candidate.length !== previous.length ? candidate.length > previous.length : candidate.primary > previous.primary;
  return candidate.kind === previous.kind && candidate.length === previous.length && candidate.primary > previous.primary;
}

/**
 * A selection of legal plays from a hand (not every subset: one representative card set per shape,
 * rank and length, with the lowest attachments), each as card ids, that form a supported combination
 * and beat `previous` when there is one. Enough for an autonomous player and for a person's menu.
 */
export function suggestPlays<C extends CardFace & { card_id: string }>(
  hand: readonly C[],
  previous: Combination | null,
): { card_ids: string[]; combination: Combination }[] {
  const byValue = new Map<number, C[]>();
  for (const c of [...hand].sort((a, b) => a.value - b.value)) byValue.set(c.value, [...(byValue.get(c.value) ?? []), c]);
  const values = [...byValue.keys()];
  const take = (v: number, n: number) => byValue.get(v)!.slice(0, n);
  const has = (v: number, n: number) => (byValue.get(v)?.length ?? 0) >= n;
  const candidates: C[][] = [];
  // The lowest `n` other ranks holding at least `k` cards, excluding `not`.
  const attachments = (not: number[], n: number, k: number) => {
    const picks = values.filter((v) => !not.includes(v) && has(v, k)).slice(0, n);
    return picks.length === n ? picks.flatMap((v) => take(v, k)) : null;
  };
  for (const v of values) {
    const count = byValue.get(v)!.length;
    for (let n = 1; n <= count; n++) candidates.push(take(v, n));
    if (count >= 3) {
      for (const [n, k] of [
        [1, 1],
        [1, 2],
      ] as const) {
        const a = attachments([v], n, k);
        if (a) candidates.push([...take(v, 3), ...a]);
      }
    }
    if (count >= 4) {
      for (const k of [1, 2]) {
        const a = attachments([v], 2, k);
        if (a) candidates.push([...take(v, 4), ...a]);
      }
    }
  }
  const jokers = hand.filter((c) => c.suit === 'joker').sort((a, b) => b.value - a.value);
  for (let n = 2; n <= jokers.length; n++) candidates.push(jokers.slice(0, n));
  // Runs of consecutive ranks below the 2s: straights (1 each), pair straights (2), airplanes (3).
  for (const [width, minRun] of [
    [1, 5],
    [2, 3],
    [3, 2],
  ] as const) {
    for (let start = 3; start <= 14; start++) {
      for (let end = start; end <= 14 && has(end, width); end++) {
        const run: number[] = [];
        for (let v = start; v <= end; v++) run.push(v);
        if (run.length < minRun) continue;
        const body = run.flatMap((v) => take(v, width));
        candidates.push(body);
        if (width === 3) {
          for (const k of [1, 2]) {
            const a = attachments(run, run.length, k);
            if (a) candidates.push([...body, ...a]);
          }
        }
      }
    }
  }
  const out: { card_ids: string[]; combination: Combination }[] = [];
  const seen = new Set<string>();
  for (const cards of candidates) {
    let combination: Combination;
    try {
      combination = classify(cards);
    } catch {
      continue;
    }
    if (previous && !beats(combination, previous)) continue;
    const key = `${combination.kind}:${combination.primary}:${combination.length}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ card_ids: cards.map((c) => c.card_id), combination });
  }
  return out;
}

/** A Landlord card face as the reference's shared deck catalogs it. */
export interface CardFace {
  rank: string;
  value: number;
  suit: string;
}
