// The published package's costs, from the built dist/ (npm run build first): CLI start-up on plain Node
// next to `node -e ''`, fresh processes taking turns (floor: --help ÷ `node -e ''` ≤ 3×, on the median
// of the paired ratios), and the size of a crypto-only page that vite builds from
// `import { createCrypto } from 'aigenora/crypto'`, what it loads at start and each feature module loaded
// when used (figures). Nothing written but the temporary package
// and page. Writes bench/results/package.md and package.floors.json.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { floorTable, interleavedRuns, median, ratioFloor, writeFloors } from './measure.js';

const ROOT = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'aigenora-bench-pkg-'));
try {
  // The package as installed: no ts/ beside bin/, so bin/aigenora.mjs runs dist/ on plain Node.
  const pkg = join(work, 'node_modules/aigenora');
  mkdirSync(pkg, { recursive: true });
  for (const p of ['package.json', 'bin', 'dist', 'bindings']) cpSync(join(ROOT, p), join(pkg, p), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));

  /** ms of one fresh process running `args`. */
  const once = (args: string[]): number => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: work, encoding: 'utf8' });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return ms;
  };
  const bin = join(pkg, 'bin/aigenora.mjs');
  writeFileSync(join(work, 'spec.json'), readFileSync(join(ROOT, 'ts/protocols/rps/spec.json')));
  const RUNS = 15;
  const t = await interleavedRuns(
    {
      base: () => once(['-e', '']),
      version: () => once([bin, '--version']),
      help: () => once([bin, '--help']),
      trade: () => once([bin, 'trade', '--help']),
      hash: () => once([bin, 'protocol', 'hash', 'spec.json']),
    },
    RUNS,
  );
  const host = await interleavedRuns({ base: () => once(['-e', '']), host: () => once([bin, 'host', '--help']) }, 7);
  const base = median(t.base);
  const rows: [string, number, number[], number[]][] = [
    ["node -e ''", base, t.base, t.base],
    ['aigenora --version', median(t.version), t.version, t.base],
    ['aigenora --help', median(t.help), t.help, t.base],
    ['aigenora trade --help', median(t.trade), t.trade, t.base],
    ['aigenora protocol hash spec.json (loads WASM, spec)', median(t.hash), t.hash, t.base],
    ['aigenora host --help (loads libp2p)', median(host.host), host.host, host.base],
  ];
  const floors = [ratioFloor("aigenora --help time ÷ node -e '' time (fresh processes, taking turns)", t.help, t.base, 3, true)];
  writeFloors('package', floors);

  const site = join(work, 'site');
  mkdirSync(site);
  writeFileSync(join(site, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
  writeFileSync(join(site, 'main.js'), "import { createCrypto } from 'aigenora/crypto';\nconst c = await createCrypto();\nconsole.log(c.backend);\n");
  const b = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', 'out'], {
    cwd: site,
    encoding: 'utf8',
  });
  if (b.status !== 0) throw new Error(`vite build: ${b.stderr}`);
  const assets = join(site, 'out/assets');
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  /** Raw and gzip -9 sizes of some files together, as a table row's two cells. */
  const sizes = (files: string[]) => {
    const b = Buffer.concat(files.map((f) => readFileSync(join(assets, f))));
    return `${kib(b.length)} | ${kib(gzipSync(b, { level: 9 }).length)}`;
  };
  // The feature modules (ts/crypto/backend.ts, CryptoFeature): their .wasm is fetched by
  // loadCryptoFeature only, so a page's start loads the core's; their glue is in the JS (or a chunk of
  // its own, should the bundler split it off: counted with the JS either way).
  const FEATURES = ['mp', 'gojson', 'pyjson'] as const;
  const files = readdirSync(assets);
  const wasmOf = (x: string) => files.filter((f) => f.endsWith('.wasm') && f.startsWith(`${x}_bg-`));
  const standalone = readFileSync(join(ROOT, 'dist/web/aigenora-crypto.js'));

  const lines = [
    '# The npm package',
    '',
    `${new Date().toISOString()} · Node ${process.version} · median of ${RUNS} runs (7 for host) of a fresh process, the commands taking turns round by round with \`node -e ''\`, the package laid out as installed`,
    '',
    "| command | time (median) | ÷ node -e '' (median of paired ratios) |",
    '|---|---:|---:|',
    ...rows.map(([name, ms, xs, den]) => `| ${name} | ${ms.toFixed(0)} ms | ${ratioFloor(name, xs, den, 0).median.toFixed(2)}× |`),
    '',
    '## Floor, from this run',
    '',
    "The ratio divides a fresh process's wall time for `aigenora --help` by `node -e ''`'s in the same round (lower is better).",
    '',
    ...floorTable(floors),
    '',
    'The page sizes below are figures: no floor.',
    '',
    '| crypto-only page (vite build) | raw | gzip -9 |',
    '|---|---:|---:|',
    `| JS | ${sizes(files.filter((f) => f.endsWith('.js')))} |`,
    `| WASM at start (the core module) | ${sizes(wasmOf('aigenora_wasm'))} |`,
    ...FEATURES.map((x) => `| WASM feature module ${x} (loaded when used) | ${sizes(wasmOf(`aigenora_wasm_${x}`))} |`),
    `| dist/web/aigenora-crypto.js (no bundler) | ${kib(standalone.length)} | ${kib(gzipSync(standalone, { level: 9 }).length)} |`,
  ];
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  writeFileSync(new URL('results/package.md', import.meta.url), report);
} finally {
  rmSync(work, { recursive: true, force: true });
}
