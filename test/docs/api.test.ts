// README.md's "Public API" against the modules behind each entry point of package.json (and of the
// light package, packages/core), both ways: every name an entry exports is listed, as a value or after
// `types:` as a type, and every name listed is exported so. An entry with a browser build has the same
// exports there, less the lines marked Node only. The modules are read by the TypeScript compiler (no
// type check, nothing imported), as a consumer's tsc sees them.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
type Conditions = string | { [condition: string]: string };
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, Conditions> };
const CORE = JSON.parse(readFileSync(join(ROOT, 'packages/core/package.json'), 'utf8')) as { exports: Record<string, Conditions> };
/** Built by scripts/build-web.mjs from the crypto entry's browser module, not by tsc. */
const BUNDLED: Record<string, string> = { 'dist/web/aigenora-crypto.js': 'ts/crypto/browser.ts' };

interface Listed {
  values: Set<string>;
  types: Set<string>;
  nodeOnly: Set<string>;
}
interface Entry extends Listed {
  name: string;
  aliases: string[];
  includes: string[];
}

/** The section's entries, each with what its lines list. */
function readmeEntries(): Entry[] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = text.indexOf('\n## Public API\n');
  if (start < 0) throw new Error('README.md has no "## Public API" section');
  const end = text.indexOf('\n## ', start + 1);
  const entries: Entry[] = [];
  const ticked = (s: string) => [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  for (const line of text.slice(start, end < 0 ? undefined : end).split('\n')) {
    if (line.startsWith('### ')) {
      const [name, ...aliases] = ticked(line).filter((t) => t.startsWith('aigenora'));
      if (!name) throw new Error(`a Public API heading without an entry: ${line}`);
      entries.push({ name, aliases, includes: [], values: new Set(), types: new Set(), nodeOnly: new Set() });
      continue;
    }
    if (!line.startsWith('- ')) continue;
    const entry = entries.at(-1);
    if (!entry) throw new Error(`a Public API line before any entry: ${line}`);
    if (line.startsWith('- all of ')) {
      entry.includes.push(...ticked(line));
      continue;
    }
    const colon = line.indexOf(': ');
    const label = line.slice(2, colon);
    const [values = '', types = ''] = line.slice(colon + 2).split(/(?:^|; )types: /);
    for (const [names, into] of [
      [ticked(values), entry.values],
      [ticked(types), entry.types],
    ] as const)
      for (const n of names) {
        expect(entry.values.has(n) || entry.types.has(n), `${entry.name} lists ${n} twice`).toBe(false);
        into.add(n);
        if (label.includes('Node only')) entry.nodeOnly.add(n);
      }
  }
  return entries;
}

const ENTRIES = readmeEntries();
const byName = new Map(ENTRIES.map((e) => [e.name, e]));

/** An entry's lines, with those of the entries it includes. */
function listed(e: Entry): Listed {
  const out: Listed = { values: new Set(e.values), types: new Set(e.types), nodeOnly: new Set(e.nodeOnly) };
  for (const name of e.includes) {
    const inc = byName.get(name);
    if (!inc) throw new Error(`${e.name} includes ${name}, which has no heading`);
    const l = listed(inc);
    for (const k of ['values', 'types', 'nodeOnly'] as const) for (const n of l[k]) out[k].add(n);
  }
  return out;
}

const subpath = (name: string) => (name === 'aigenora' || name === 'aigenora-core' ? '.' : `./${name.slice(name.indexOf('/') + 1)}`);
const source = (dist: string) => BUNDLED[dist.replace(/^\.\//, '')] ?? dist.replace(/^\.\/dist\//, 'ts/').replace(/\.js$/, '.ts');

/** The modules behind an entry of the root package: the full one, and the browser one when it differs. */
function modulesOf(name: string): { full: string; browser?: string } {
  const c = PKG.exports[subpath(name)];
  if (!c || typeof c === 'string') throw new Error(`package.json has no conditional export ${subpath(name)}`);
  const full = source(c['node'] ?? c['default']!);
  const browser = c['browser'] ?? (c['node'] ? c['default'] : undefined);
  return browser && source(browser) !== full ? { full, browser: source(browser) } : { full };
}

const MODULES = [...new Set(ENTRIES.flatMap((e) => Object.values(modulesOf(e.name))))];
const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
const program = ts.createProgram(
  MODULES.map((m) => join(ROOT, m)),
  config.options,
);
const checker = program.getTypeChecker();

/** A module's exports as a consumer's TypeScript sees them: values, and names that are only types. */
function exportsOf(module: string): { values: Set<string>; types: Set<string> } {
  const file = program.getSourceFile(join(ROOT, module));
  if (!file) throw new Error(`${module} is not in the program`);
  const out = { values: new Set<string>(), types: new Set<string>() };
  for (const e of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)) {
    let s = e;
    let typeOnly = false;
    while (s.flags & ts.SymbolFlags.Alias) {
      typeOnly ||= (s.declarations ?? []).some((d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly));
      const target = checker.getImmediateAliasedSymbol(s);
      if (!target) throw new Error(`${module} exports ${e.name}, which does not resolve (tsc says why)`);
      s = target;
    }
    (!typeOnly && s.flags & ts.SymbolFlags.Value ? out.values : out.types).add(e.name);
  }
  return out;
}

const sorted = (s: Iterable<string>) => [...s].sort();
const minus = (a: Set<string>, b: Set<string>) => new Set([...a].filter((n) => !b.has(n)));

describe("README.md's Public API", () => {
  it('names every entry point of both packages, and nothing else', () => {
    const keys = (exports: Record<string, Conditions>) => Object.keys(exports).filter((k) => k !== './package.json');
    const root = ENTRIES.flatMap((e) => [e.name, ...e.aliases]).filter((n) => !n.startsWith('aigenora-core'));
    const core = ENTRIES.flatMap((e) => [e.name, ...e.aliases]).filter((n) => n.startsWith('aigenora-core'));
    expect(sorted(root.map(subpath))).toEqual(sorted(keys(PKG.exports)));
    expect(sorted(core.map(subpath))).toEqual(sorted(keys(CORE.exports)));
    // The light package is built from the root's modules (scripts/build-core.mjs): an alias there is the same entry.
    for (const e of ENTRIES) for (const a of e.aliases.filter((n) => n.startsWith('aigenora-core'))) expect(subpath(a), a).toBe(subpath(e.name));
  });

  it.each(ENTRIES.map((e) => [e.name, e] as const))('%s: the list and the module agree', (_, entry) => {
    const want = listed(entry);
    const { full, browser } = modulesOf(entry.name);
    const got = exportsOf(full);
    expect({ module: full, values: sorted(got.values), types: sorted(got.types) }).toEqual({
      module: full,
      values: sorted(want.values),
      types: sorted(want.types),
    });
    if (browser) {
      const b = exportsOf(browser);
      expect({ module: browser, values: sorted(b.values), types: sorted(b.types) }).toEqual({
        module: browser,
        values: sorted(minus(want.values, want.nodeOnly)),
        types: sorted(minus(want.types, want.nodeOnly)),
      });
    } else expect(sorted(want.nodeOnly), `${entry.name} has no browser build to leave them out of`).toEqual([]);
  });

  it('reads the modules it compares (a sanity check of the reader)', () => {
    expect(MODULES.map((m) => relative(ROOT, join(ROOT, m)))).toContain('ts/crypto/browser.ts');
    const crypto = exportsOf('ts/crypto/index.ts');
    expect(crypto.values.has('getCrypto') && crypto.types.has('Crypto') && !crypto.values.has('Crypto')).toBe(true);
  });
});
