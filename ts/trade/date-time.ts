/**
 * A quick yes for the date-times envelopes carry, ahead of ajv-formats' own `date-time` check (full
 * mode), which splits the string with a regular expression and runs two more: about a third of a
 * microsecond each, several times an envelope.
 *
 * `isPlainDateTime` answers true only for `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (either case of
 * T and Z) naming a real day, an hour up to 23, minutes and seconds up to 59, and an offset up to
 * 23:59: every such string passes ajv-formats' check too (its one `t` splits it in two, the date and
 * time regular expressions match, and every range holds). Anything else, leap seconds and the looser
 * spellings ajv-formats also takes included, is false here and left to ajv-formats, so that the verdict
 * is always ajv-formats' own (test/trade/fast-paths.test.ts holds the two side by side).
 */

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The two-digit number at `at`, or -1. */
function two(s: string, at: number): number {
  const a = s.charCodeAt(at) - 48;
  const b = s.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

export function isPlainDateTime(s: string): boolean {
  const n = s.length;
  if (n < 20) return false;
  const hi = two(s, 0);
  const lo = two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  if (hi < 0 || lo < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  const t = s.charCodeAt(10);
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (t !== 84 && t !== 116) || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false;
  const year = hi * 100 + lo;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS[month]!)) return false;
  let i = 19;
  if (s.charCodeAt(i) === 46) {
    i++;
    const from = i;
    while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    if (i === from) return false;
  }
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n;
  if (z !== 43 && z !== 45) return false;
  if (i + 6 !== n || s.charCodeAt(i + 3) !== 58) return false;
  const offsetHour = two(s, i + 1);
  const offsetMinute = two(s, i + 4);
  return offsetHour >= 0 && offsetHour <= 23 && offsetMinute >= 0 && offsetMinute <= 59;
}
