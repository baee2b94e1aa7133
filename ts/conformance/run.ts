/**
 * Walks conformance paths, runs every recognised suite on the chosen backends, and reports one line
 * per file and suite plus totals. A case passes on a backend when it meets its expectation; when two
 * backends are run, they must also agree on the observable outcome.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { isRfc8785Folder, recognise, rfc8785Folder, type Suite } from './formats.js';

export interface SuiteReport {
  path: string;
  format: string;
  total: number;
  /** Cases that met their expectation, per backend name. */
  passed: Record<string, number>;
  /** Cases whose outcome differed between backends. */
  disagreements: number;
  /** A few failing case ids, for the report. */
  failures: string[];
}

export interface Report {
  suites: SuiteReport[];
  skipped: string[];
  /** Paths that could not be read, or explicitly named files in no known format. */
  errors: string[];
  passed: number;
  failed: number;
}

const DOCS = /(^|\/)(README|LICENSE|PROVENANCE|EXPECTED|NOTICE)(\.[a-z]+)?$|\.md$/i;

function runSuite(path: string, suite: Suite, backends: readonly Crypto[]): SuiteReport {
  const r: SuiteReport = { path, format: suite.format, total: suite.cases.length, passed: {}, disagreements: 0, failures: [] };
  for (const b of backends) r.passed[b.backend] = 0;
  for (const c of suite.cases) {
    const outcomes = backends.map((b) => {
      const { ok, outcome } = c.run(b);
      if (ok) r.passed[b.backend]!++;
      else if (r.failures.length < 5) r.failures.push(`${c.id} (${b.backend}: ${outcome.slice(0, 40)})`);
      return outcome;
    });
    if (outcomes.some((o) => o !== outcomes[0])) {
      r.disagreements++;
      if (r.failures.length < 5) r.failures.push(`${c.id} (backends disagree)`);
    }
  }
  return r;
}

export function runConformance(paths: readonly string[], backends: readonly Crypto[], base = process.cwd()): Report {
  const report: Report = { suites: [], skipped: [], errors: [], passed: 0, failed: 0 };
  const rel = (p: string) => relative(base, p) || p;

  const visit = (path: string, named: boolean) => {
    let st;
    try {
      st = statSync(path);
    } catch (e) {
      report.errors.push(`${rel(path)}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return;
    }
    if (st.isDirectory()) {
      if (isRfc8785Folder(path)) {
        report.suites.push(runSuite(rel(path), rfc8785Folder(path), backends));
        return;
      }
      for (const name of readdirSync(path).sort()) visit(join(path, name), false);
      return;
    }
    let suite: Suite | undefined;
    try {
      suite = DOCS.test(path) && !named ? undefined : recognise(path);
    } catch (e) {
      report.errors.push(`${rel(path)}: cannot read (${(e as Error).message})`);
      return;
    }
    if (suite) report.suites.push(runSuite(rel(path), suite, backends));
    else if (named) report.errors.push(`${rel(path)}: not a test-vector format this command knows`);
    else report.skipped.push(rel(path));
  };

  for (const p of paths) visit(p, true);
  for (const s of report.suites) {
    for (const b of backends) {
      report.passed += s.passed[b.backend]!;
      report.failed += s.total - s.passed[b.backend]!;
    }
    report.failed += s.disagreements;
  }
  return report;
}
