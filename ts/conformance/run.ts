/**
 * Walks conformance paths, runs every recognised suite on the chosen backends, and reports one line
 * per file and suite plus totals. A case passes when it meets its expectation on every backend run
 * and, with two backends, they agree on its outcome. Totals count each case once: once whatever the
 * number of backends, and once when two files hold it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { DOCS, KNOWN_VECTORS, knownVectors, notVectors } from './corpus.js';
import { isRfc8785Folder, recognise, rfc8785Folder, type Suite } from './formats.js';

export interface SuiteReport {
  path: string;
  format: string;
  /** Cases in the file. */
  total: number;
  /** Of those, cases an earlier file already had (same inputs and expectation): not run again. */
  repeated: number;
  /** Cases run that met their expectation, per backend name. */
  passed: Record<string, number>;
  /** Cases whose outcome differed between backends. */
  disagreements: number;
  /** Cases run that failed on some backend or on which the backends disagreed. */
  failed: number;
  /** A few failing case ids, for the report. */
  failures: string[];
}

export interface Report {
  suites: SuiteReport[];
  /** Files not run, each with the reason (documentation, or not vectors for this command). */
  skipped: { path: string; why: string }[];
  /** Unreadable paths, files in no known format, known corpus files missing or not as the corpus README says, no suite at all. */
  errors: string[];
  /** Distinct cases that passed / failed. */
  passed: number;
  failed: number;
}

function runSuite(path: string, suite: Suite, backends: readonly Crypto[], seen: Set<string>): SuiteReport {
  const r: SuiteReport = { path, format: suite.format, total: suite.cases.length, repeated: 0, passed: {}, disagreements: 0, failed: 0, failures: [] };
  for (const b of backends) r.passed[b.backend] = 0;
  for (const c of suite.cases) {
    if (seen.has(c.key)) {
      r.repeated++;
      continue;
    }
    seen.add(c.key);
    let ok = true;
    const outcomes = backends.map((b) => {
      const res = c.run(b);
      if (res.ok) r.passed[b.backend]!++;
      else if (r.failures.length < 5) r.failures.push(`${c.id} (${b.backend}: ${res.outcome.slice(0, 40)})`);
      ok &&= res.ok;
      return res.outcome;
    });
    if (outcomes.some((o) => o !== outcomes[0])) {
      r.disagreements++;
      ok = false;
      if (r.failures.length < 5) r.failures.push(`${c.id} (backends disagree)`);
    }
    if (!ok) r.failed++;
  }
  return r;
}

export function runConformance(paths: readonly string[], backends: readonly Crypto[], base = process.cwd()): Report {
  const report: Report = { suites: [], skipped: [], errors: [], passed: 0, failed: 0 };
  const rel = (p: string) => relative(base, p) || p;
  const slashed = (p: string) => p.split(sep).join('/');
  const seen = new Set<string>();

  const add = (path: string, suite: Suite) => {
    const known = knownVectors(slashed(path));
    if (known && (known.format !== suite.format || known.cases !== suite.cases.length)) {
      report.errors.push(`${rel(path)}: ${suite.cases.length} cases [${suite.format}]; the corpus has ${known.cases} [${known.format}] there`);
    }
    report.suites.push(runSuite(rel(path), suite, backends, seen));
  };

  const visit = (path: string, named: boolean) => {
    let st;
    try {
      st = statSync(path);
    } catch (e) {
      report.errors.push(`${rel(path)}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return;
    }
    const why = notVectors(slashed(path));
    if (why && !named) {
      report.skipped.push({ path: rel(path), why });
      return;
    }
    if (st.isDirectory()) {
      if (isRfc8785Folder(path)) return add(path, rfc8785Folder(path));
      // At the top of a corpus folder, every file the corpus README lists must be there.
      const missing = KNOWN_VECTORS.filter((k) => !existsSync(join(path, k.path)));
      if (missing.length < KNOWN_VECTORS.length) for (const k of missing) report.errors.push(`${rel(join(path, k.path))}: missing from the corpus`);
      for (const name of readdirSync(path).sort()) visit(join(path, name), false);
      return;
    }
    if (DOCS.test(slashed(path)) && !named) {
      report.skipped.push({ path: rel(path), why: 'documentation' });
      return;
    }
    let suite: Suite | undefined;
    try {
      suite = why ? undefined : recognise(path);
    } catch (e) {
      report.errors.push(`${rel(path)}: cannot read (${(e as Error).message})`);
      return;
    }
    if (suite) add(path, suite);
    else report.errors.push(`${rel(path)}: ${why ? `not test vectors (${why})` : 'not a test-vector format this command knows'}`);
  };

  for (const p of paths) visit(p, true);
  if (report.suites.length === 0) report.errors.push(`no test-vector file found in ${paths.map(rel).join(', ')}`);
  for (const s of report.suites) {
    report.failed += s.failed;
    report.passed += s.total - s.repeated - s.failed;
  }
  return report;
}
