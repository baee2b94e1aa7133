/**
 * Classical Mahjong Core's tile rules, as the reference's Mahjong helpers define them: the 34 faces
 * (in catalog order, so a seeded wall has the reference's tile ids), the three winning shapes, the
 * small additive scoring profile and the chow choices. Pure functions on tile faces.
 */

export interface TileFace {
  code: string;
  suit: string;
  rank: number;
  label: string;
  kind: 'numbered' | 'honor';
}

export interface Pattern {
  code: string;
  points: number;
}

export type WinKind = 'standard' | 'seven_pairs' | 'thirteen_orphans';
export type MeldKind = 'chow' | 'pung' | 'kong' | 'concealed_kong';

/** A tile set or winning-shape request the rules cannot judge; its message is the reference's. */
export class MahjongRuleError extends Error {
  override name = 'MahjongRuleError';
}

const NUMBERED_SUITS: [string, string][] = [
  ['characters', 'm'],
  ['dots', 'p'],
  ['bamboo', 's'],
];
export const HONOR_CODES = ['east', 'south', 'west', 'north', 'red', 'green', 'white'] as const;
const HONORS: ReadonlySet<string> = new Set(HONOR_CODES);
const ORPHANS: ReadonlySet<string> = new Set(['1m', '9m', '1p', '9p', '1s', '9s', ...HONOR_CODES]);
const SUIT_ORDER: Record<string, number> = { m: 0, p: 1, s: 2 };

/** The 34 faces: characters, dots, bamboo 1-9, then the four winds and three dragons. */
export function tileFaces(): TileFace[] {
  const faces: TileFace[] = [];
  for (const [suit, letter] of NUMBERED_SUITS)
    for (let rank = 1; rank <= 9; rank++) faces.push({ code: `${rank}${letter}`, suit, rank, label: `${rank} ${suit}`, kind: 'numbered' });
  for (const code of HONOR_CODES)
    faces.push({
      code,
      suit: code === 'red' || code === 'green' || code === 'white' ? 'dragon' : 'wind',
      rank: 0,
      label: code[0]!.toUpperCase() + code.slice(1),
      kind: 'honor',
    });
  return faces;
}

const ALL_CODES: ReadonlySet<string> = new Set(tileFaces().map((f) => f.code));

function tileCode(tile: unknown): string {
  if (typeof tile !== 'object' || tile === null || Array.isArray(tile)) throw new MahjongRuleError('every tile must be an object');
  const code = (tile as Record<string, unknown>)['code'];
  if (typeof code !== 'string' || !ALL_CODES.has(code)) throw new MahjongRuleError('tile code is invalid');
  return code;
}

/** 'm', 'p', 's' for a numbered tile, 'honor' otherwise. */
export const codeSuit = (code: string): string => (code.length === 2 && code[0]! >= '0' && code[0]! <= '9' ? code[1]! : 'honor');
const isNumbered = (code: string) => codeSuit(code) !== 'honor';

function sortKey(code: string): [number, number] {
  const suit = codeSuit(code);
  return suit in SUIT_ORDER ? [SUIT_ORDER[suit]!, Number(code[0])] : [3, HONOR_CODES.indexOf(code as (typeof HONOR_CODES)[number])];
}
const bySortKey = (a: string, b: string) => {
  const [x, y] = [sortKey(a), sortKey(b)];
  return x[0] - y[0] || x[1] - y[1];
};

function countCodes(codes: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of codes) counts.set(c, (counts.get(c) ?? 0) + 1);
  return counts;
}

function take(counts: Map<string, number>, code: string, n: number): Map<string, number> {
  const next = new Map(counts);
  const left = next.get(code)! - n;
  if (left === 0) next.delete(code);
  else next.set(code, left);
  return next;
}

/** Whether the tiles split into exactly `needed` pungs and chows (the lowest tile starts one of them). */
function canFormMelds(counts: Map<string, number>, needed: number): boolean {
  if (needed === 0) return counts.size === 0;
  let total = 0;
  for (const n of counts.values()) total += n;
  if (total !== needed * 3) return false;
  const code = [...counts.keys()].sort(bySortKey)[0]!;
  if (counts.get(code)! >= 3 && canFormMelds(take(counts, code, 3), needed - 1)) return true;
  const suit = codeSuit(code);
  const rank = Number(code[0]);
  if (suit !== 'honor' && rank <= 7) {
    const run = [code, `${rank + 1}${suit}`, `${rank + 2}${suit}`];
    if (run.every((c) => (counts.get(c) ?? 0) > 0)) {
      let next = counts;
      for (const c of run) next = take(next, c, 1);
      if (canFormMelds(next, needed - 1)) return true;
    }
  }
  return false;
}

function isStandard(counts: Map<string, number>, needed: number): boolean {
  for (const [code, n] of counts) if (n >= 2 && canFormMelds(take(counts, code, 2), needed)) return true;
  return false;
}

const isSevenPairs = (counts: Map<string, number>) =>
  [...counts.values()].reduce((a, n) => a + Math.floor(n / 2), 0) === 7 && [...counts.values()].every((n) => n % 2 === 0);

const isThirteenOrphans = (counts: Map<string, number>) =>
  counts.size === ORPHANS.size && [...counts.keys()].every((c) => ORPHANS.has(c)) && [...ORPHANS].some((c) => counts.get(c) === 2);

/**
 * The winning shape the concealed tiles make next to `meldCount` exposed melds: four melds and a pair
 * (kongs count as one meld), seven pairs or thirteen orphans (those two only fully concealed), or null.
 */
export function winKind(concealed: readonly unknown[], meldCount = 0): WinKind | null {
  if (typeof meldCount !== 'number' || !Number.isInteger(meldCount) || meldCount < 0 || meldCount > 4)
    throw new MahjongRuleError('meld_count must be between zero and four');
  const codes = concealed.map(tileCode);
  if (codes.length !== 3 * (4 - meldCount) + 2) return null;
  const counts = countCodes(codes);
  if ([...counts.values()].some((n) => n > 4)) throw new MahjongRuleError('a Mahjong face cannot appear more than four times');
  if (meldCount === 0 && isThirteenOrphans(counts)) return 'thirteen_orphans';
  if (meldCount === 0 && isSevenPairs(counts)) return 'seven_pairs';
  if (isStandard(counts, 4 - meldCount)) return 'standard';
  return null;
}

/** The classical-core profile's patterns for a win: every tile of the hand, melds included. */
export function scorePatterns(
  allTiles: readonly unknown[],
  o: { winKind: string; meldKinds?: readonly string[]; selfDraw?: boolean; concealed?: boolean },
): Pattern[] {
  const codes = allTiles.map(tileCode);
  if (!['standard', 'seven_pairs', 'thirteen_orphans'].includes(o.winKind)) throw new MahjongRuleError('win_kind is invalid');
  const melds = [...(o.meldKinds ?? [])];
  if (melds.some((k) => !['chow', 'pung', 'kong', 'concealed_kong'].includes(k))) throw new MahjongRuleError('meld kind is invalid');
  const patterns: Pattern[] = [{ code: 'winning_hand', points: 1 }];
  if (o.selfDraw ?? false) patterns.push({ code: 'self_draw', points: 1 });
  if (o.concealed ?? true) patterns.push({ code: 'concealed_hand', points: 1 });
  if (o.winKind === 'seven_pairs') patterns.push({ code: 'seven_pairs', points: 4 });
  else if (o.winKind === 'thirteen_orphans') patterns.push({ code: 'thirteen_orphans', points: 13 });
  if (o.winKind === 'standard' && melds.length === 4 && melds.every((k) => k !== 'chow')) patterns.push({ code: 'all_pungs', points: 3 });
  const suits = new Set(codes.filter(isNumbered).map(codeSuit));
  const honors = codes.some((c) => HONORS.has(c));
  if (suits.size === 1) patterns.push(honors ? { code: 'mixed_one_suit', points: 3 } : { code: 'pure_one_suit', points: 6 });
  if (codes.length && codes.every((c) => !HONORS.has(c) && c[0] !== '1' && c[0] !== '9')) patterns.push({ code: 'all_simples', points: 1 });
  return patterns;
}

/** Every pair of codes from the hand that makes a run with the discard, lowest run first. */
export function chowSequences(hand: readonly unknown[], discard: unknown): string[][] {
  const target = tileCode(discard);
  const suit = codeSuit(target);
  if (suit === 'honor') return [];
  const rank = Number(target[0]);
  const available = countCodes(hand.map(tileCode));
  const out: string[][] = [];
  for (let start = Math.max(1, rank - 2); start <= Math.min(rank, 7); start++) {
    const needed = [start, start + 1, start + 2].map((v) => `${v}${suit}`).filter((c) => c !== target);
    if (needed.length === 2 && needed.every((c) => (available.get(c) ?? 0) >= 1)) out.push(needed);
  }
  return out;
}

/** Index 0-33 of a code in the face catalog (numbered suits then honors). */
export function codeIndex(code: string): number {
  const suit = codeSuit(code);
  return suit === 'honor' ? 27 + HONOR_CODES.indexOf(code as (typeof HONOR_CODES)[number]) : SUIT_ORDER[suit]! * 9 + Number(code[0]) - 1;
}
