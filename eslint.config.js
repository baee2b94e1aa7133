// `npm run lint` (scripts/test.sh runs it beside tsc): a few rules tsc and prettier do not check. Syntax
// only (no type information), which keeps it to seconds over the whole tree.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// test/lint/purity.test.ts's rule for the pure modules, which it checks on the syntax tree; here it is
// also shown in editors. Both read the modules, edges, built-ins and globals from one file.
const PURITY = JSON.parse(readFileSync(new URL('./test/lint/pure-modules.json', import.meta.url), 'utf8'));
export const PURE = PURITY.pure;
export const EDGES = Object.keys(PURITY.edges);
export const NODE_BUILTINS = PURITY.nodeBuiltins;
export const FORBIDDEN_GLOBALS = PURITY.forbiddenGlobals;

const pure = 'a pure module (test/lint/purity.test.ts) takes time and randomness as inputs: no node:*, clock, timers or OS randomness';
const builtin = `(node:.*|(${NODE_BUILTINS.join('|')})(/.*)?)`;
const noExportAll = { selector: 'ExportAllDeclaration', message: 'name what the module exports; `export *` makes every helper public' };

export default defineConfig(
  { ignores: ['dist/', 'bindings/', 'target/', 'node_modules/', 'packages/core/dist/', 'packages/core/bindings/', '.cache/', 'test-vectors/', 'crates/'] },
  {
    files: ['ts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs', 'bin/**/*.mjs', 'eslint.config.js', 'vitest.config.ts'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
    },
  },
  {
    // Each entry point names what it exports (README.md's Public API lists them; test/docs/api.test.ts).
    files: ['ts/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', noExportAll] },
  },
  {
    // The root entries are the union of the part entries, each of which names its exports.
    files: ['ts/index.ts', 'ts/browser.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: PURE.map((p) => (p.endsWith('.ts') ? p : `${p}/**/*.ts`)),
    ignores: EDGES,
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: `^${builtin}$`, message: pure }] }],
      'no-restricted-globals': ['error', ...['Date', ...FORBIDDEN_GLOBALS].map((name) => ({ name, message: pure }))],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: pure },
        { property: 'getRandomValues', message: pure },
        { property: 'randomUUID', message: pure },
      ],
      'no-restricted-syntax': ['error', noExportAll, { selector: `ImportExpression > Literal[value=/^${builtin.replaceAll('/', '\\/')}$/]`, message: pure }],
    },
  },
);
