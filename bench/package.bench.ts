// The published package's costs, from the built dist/ (npm run build first): CLI start-up on plain Node
// next to `node -e ''` (floor: --help within 3x), and the size of a crypto-only page that vite builds
// from `import { createCrypto } from 'aigenora/crypto'`. Writes bench/results/package.md.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'aigenora-bench-pkg-'));
try {
  // The package as installed: no ts/ beside bin/, so bin/aigenora.mjs runs dist/ on plain Node.
  const pkg = join(work, 'node_modules/aigenora');
  mkdirSync(pkg, { recursive: true });
  for (const p of ['package.json', 'bin', 'dist', 'bindings']) cpSync(join(ROOT, p), join(pkg, p), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));

  const time = (args: string[], n = 15): number => {
    const runs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: work, encoding: 'utf8' });
      runs.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    }
    return runs.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  };
  const bin = join(pkg, 'bin/aigenora.mjs');
  writeFileSync(join(work, 'spec.json'), readFileSync(join(ROOT, 'ts/protocols/rps/spec.json')));
  const base = time(['-e', '']);
  const rows: [string, number][] = [
    ["node -e ''", base],
    ['aigenora --version', time([bin, '--version'])],
    ['aigenora --help', time([bin, '--help'])],
    ['aigenora trade --help', time([bin, 'trade', '--help'])],
    ['aigenora protocol hash spec.json (loads WASM, spec)', time([bin, 'protocol', 'hash', 'spec.json'])],
    ['aigenora host --help (loads libp2p)', time([bin, 'host', '--help'], 7)],
  ];

  const site = join(work, 'site');
  mkdirSync(site);
  writeFileSync(join(site, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
  writeFileSync(join(site, 'main.js'), "import { createCrypto } from 'aigenora/crypto';\nconst c = await createCrypto();\nconsole.log(c.backend);\n");
  const b = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', 'out'], { cwd: site, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`vite build: ${b.stderr}`);
  const assets = join(site, 'out/assets');
  const read = (ext: string) => readdirSync(assets).filter((f) => f.endsWith(ext)).map((f) => readFileSync(join(assets, f)));
  const js = Buffer.concat(read('.js'));
  const wasm = Buffer.concat(read('.wasm'));
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const standalone = readFileSync(join(ROOT, 'dist/web/aigenora-crypto.js'));

  const lines = [
    '# The npm package',
    '',
    `${new Date().toISOString()} · Node ${process.version} · median of 15 runs (7 for host) of a fresh process, the package laid out as installed`,
    '',
    '| command | time | × node -e \'\' | floor |',
    '|---|---:|---:|---|',
    ...rows.map(([name, ms]) => `| ${name} | ${ms.toFixed(0)} ms | ${(ms / base).toFixed(2)}x | ${name === 'aigenora --help' ? `≤ 3x: ${ms / base <= 3 ? 'met' : 'MISSED'}` : ''} |`),
    '',
    '| crypto-only page (vite build) | raw | gzip -9 |',
    '|---|---:|---:|',
    `| JS | ${kib(js.length)} | ${kib(gzipSync(js, { level: 9 }).length)} |`,
    `| WASM | ${kib(wasm.length)} | ${kib(gzipSync(wasm, { level: 9 }).length)} |`,
    `| dist/web/aigenora-crypto.js (no bundler) | ${kib(standalone.length)} | ${kib(gzipSync(standalone, { level: 9 }).length)} |`,
  ];
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  writeFileSync(new URL('results/package.md', import.meta.url), report);
} finally {
  rmSync(work, { recursive: true, force: true });
}
