// The rule ts/engine/mode.ts states for code that implements protocol logic: no `node:*`, no clock, no
// timers, no OS randomness, no process. Time comes in as now() and timer inputs, randomness as an
// injected source, so a session on the virtual clock replays exactly. Nothing enforced it; this does,
// on the syntax tree (comments and strings do not count), for every file of the pure folders below.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The pure modules (folders: every .ts under them), the files among them that are the I/O edge on purpose and why, and what they may not use: one list, which eslint.config.js reads too. */
const LIST = JSON.parse(readFileSync(join(ROOT, 'test/lint/pure-modules.json'), 'utf8')) as {
  pure: string[];
  edges: Record<string, string>;
  nodeBuiltins: string[];
  forbiddenGlobals: string[];
};
const PURE = LIST.pure;
const EDGES = LIST.edges;
const NODE_BUILTINS = new Set(LIST.nodeBuiltins);
const FORBIDDEN_GLOBALS = new Set(LIST.forbiddenGlobals);

/** Each violation as `line: what`. */
function impurities(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const at = (n: ts.Node, what: string) => out.push(`${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}: ${what}`);
  const moduleName = (s: string) => s.startsWith('node:') || NODE_BUILTINS.has(s.split('/')[0]!);
  const visit = (n: ts.Node) => {
    if (
      (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) &&
      n.moduleSpecifier &&
      ts.isStringLiteral(n.moduleSpecifier) &&
      moduleName(n.moduleSpecifier.text)
    )
      at(n, `imports ${n.moduleSpecifier.text}`);
    if (
      ts.isCallExpression(n) &&
      n.expression.kind === ts.SyntaxKind.ImportKeyword &&
      n.arguments[0] &&
      ts.isStringLiteral(n.arguments[0]) &&
      moduleName(n.arguments[0].text)
    )
      at(n, `imports ${n.arguments[0].text}`);
    if (ts.isIdentifier(n) && !isDeclarationName(n) && !isPropertyName(n) && !isTypePosition(n)) {
      if (n.text === 'Date') at(n, 'reads the clock (Date)');
      else if (FORBIDDEN_GLOBALS.has(n.text)) at(n, `uses ${n.text}`);
    }
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'Math' && n.name.text === 'random')
      at(n, 'draws randomness (Math.random)');
    // Web Crypto's generators, on whatever object they are reached through (globalThis.crypto, crypto).
    if (ts.isPropertyAccessExpression(n) && (n.name.text === 'getRandomValues' || n.name.text === 'randomUUID')) at(n, `draws OS randomness (${n.name.text})`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function isDeclarationName(n: ts.Identifier): boolean {
  const p = n.parent;
  return (
    (ts.isVariableDeclaration(p) ||
      ts.isFunctionDeclaration(p) ||
      ts.isParameter(p) ||
      ts.isPropertyDeclaration(p) ||
      ts.isMethodDeclaration(p) ||
      ts.isPropertySignature(p) ||
      ts.isMethodSignature(p) ||
      ts.isPropertyAssignment(p) ||
      ts.isBindingElement(p)) &&
    p.name === n
  );
}

/** `x.setTimeout` or `{ setTimeout: … }`: a property of something else, not the global. */
function isPropertyName(n: ts.Identifier): boolean {
  const p = n.parent;
  return (ts.isPropertyAccessExpression(p) && p.name === n) || (ts.isPropertyAssignment(p) && p.name === n) || (ts.isQualifiedName(p) && p.right === n);
}

function isTypePosition(n: ts.Identifier): boolean {
  for (let p: ts.Node = n.parent; p && !ts.isSourceFile(p); p = p.parent) {
    if (ts.isTypeNode(p) || ts.isTypeAliasDeclaration(p) || ts.isInterfaceDeclaration(p)) return true;
    if (ts.isExpression(p) || ts.isStatement(p)) return false;
  }
  return false;
}

function files(path: string): string[] {
  const abs = join(ROOT, path);
  if (!statSync(abs).isDirectory()) return [path];
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => relative(ROOT, join(abs, f)));
}

describe('pure modules (the rule of ts/engine/mode.ts)', () => {
  it('catch what the rule forbids and nothing it allows', () => {
    const bad = `import { readFileSync } from 'node:fs';
import { join } from 'path';
const t = Date.now(); const d = new Date(); setTimeout(() => 0, 5); const r = Math.random();
globalThis.crypto.getRandomValues(new Uint8Array(4)); process.exit(0); performance.now();
const m = await import('node:crypto');`;
    expect(impurities('bad.ts', bad)).toEqual([
      '1: imports node:fs',
      '2: imports path',
      '3: reads the clock (Date)',
      '3: reads the clock (Date)',
      '3: uses setTimeout',
      '3: draws randomness (Math.random)',
      '4: draws OS randomness (getRandomValues)',
      '4: uses process',
      '4: uses performance',
      '5: imports node:crypto',
    ]);
    const good = `import type { Stats } from './local.js';
// setTimeout and Date in a comment, and in a string: 'Date.now()'
type Clock = { now(): number; setTimeout: number };
interface T { Date: string }
export function f(clock: Clock, timers: { setTimeout(ms: number): void }): number { timers.setTimeout(1); return clock.now(); }
const o = { setTimeout: 1, process: 2 };`;
    expect(impurities('good.ts', good)).toEqual([]);
  });

  const all = [...new Set(PURE.flatMap(files))].sort();
  it('exist, and the edges named are in them', () => {
    expect(all.length).toBeGreaterThan(40);
    for (const e of Object.keys(EDGES)) expect(all).toContain(e);
  });

  it.each(all.filter((f) => !(f in EDGES)))('%s', (f) => {
    expect(impurities(f, readFileSync(join(ROOT, f), 'utf8'))).toEqual([]);
  });
});
