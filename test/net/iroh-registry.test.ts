// host --server and join --server POST_ID between two of our agents, through our own registry, over
// iroh and over libp2p, inside a loopback-only network namespace (iroh otherwise tries its public
// relays): the invitation posted with its binding signature, found by post id, the session proof
// posted by the guest, and the status and both results recorded by the server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from './helpers.js';

const RPS = new URL('../../ts/protocols/rps', import.meta.url).pathname;
const DRIVER = new URL('./iroh-driver.ts', import.meta.url).pathname;

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function playThroughRegistry(transport: 'iroh' | 'libp2p') {
  const out = mkdtempSync(join(tmpdir(), `aigenora-registry-${transport}-`));
  // Everything waits by polling, with a bound, and the test prints every process's output on failure.
  const script = `
    ip link set lo up || exit 97
    B=${JSON.stringify(BIN)}; O=${JSON.stringify(out)}
    node "$B" server --listen 127.0.0.1:0 --data-dir "$O/server" --pow-difficulty 1 >"$O/server.log" 2>&1 &
    SP=$!
    for i in $(seq 1 600); do grep -qo 'http://127.0.0.1:[0-9]*' "$O/server.log" && break; sleep 0.1; done
    S=$(grep -o 'http://127.0.0.1:[0-9]*' "$O/server.log" | head -1)
    [ -n "$S" ] || { echo "no server"; exit 5; }
    for a in h g; do node "$B" init --data-dir "$O/$a" >/dev/null && node "$B" register --server "$S" --nickname "agent-$a" --data-dir "$O/$a" >"$O/reg-$a.log" 2>&1 || { echo "register $a failed"; cat "$O/reg-$a.log"; exit 6; }; done
    node "$B" host --transport ${transport} --server "$S" --protocol-dir ${JSON.stringify(RPS)} --data-dir "$O/h" >"$O/host.log" 2>&1 &
    HP=$!
    for i in $(seq 1 600); do grep -q '^post_id: ' "$O/host.log" && break; kill -0 $HP 2>/dev/null || break; sleep 0.1; done
    P=$(grep '^post_id: ' "$O/host.log" | head -1 | cut -d' ' -f2)
    [ -n "$P" ] || { echo "no post id"; exit 7; }
    node "$B" join --server "$S" "$P" --transport ${transport} --data-dir "$O/g" --json >"$O/guest.json" 2>"$O/guest.err"; GS=$?
    wait $HP; HS=$?
    SID=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).session_id ?? "")' "$O/guest.json")
    node --import tsx ${JSON.stringify(DRIVER)} session-get "$O/g" "$S" "$SID" >"$O/session.json" 2>&1
    kill $SP; wait $SP
    echo "STATUS $HS $GS"
  `;
  const r = spawnSync('unshare', ['-n', 'bash', '-c', script], { encoding: 'utf8', timeout: 280_000 });
  const all = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error || r.status === 97 || /unshare: /.test(r.stderr ?? ''))
    throw new Error(`cannot make a loopback-only network namespace (root and util-linux needed): ${r.error?.message ?? ''}\n${all}`);
  const show = () => [all, ...['server.log', 'host.log', 'guest.json', 'guest.err', 'session.json'].map((f) => `--- ${f}\n${readOr(join(out, f))}`)].join('\n');
  expect(all, show()).toContain('STATUS 0 0');
  const guest = JSON.parse(readFileSync(join(out, 'guest.json'), 'utf8')) as Record<string, unknown>;
  const host = readFileSync(join(out, 'host.log'), 'utf8');
  const line = readFileSync(join(out, 'session.json'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('RESULT '));
  const session = (line ? JSON.parse(line.slice(7)) : {}) as Record<string, unknown>;
  return { guest, host, session, show };
}

describe('two of our agents through our registry, in a loopback-only namespace', () => {
  for (const transport of ['iroh', 'libp2p'] as const) {
    it(`over ${transport}: posted, found by post id, played, and the proof, status and results recorded`, () => {
      const { guest, host, session, show } = playThroughRegistry(transport);
      expect(guest, show()).toMatchObject({ role: 'guest', completed: true, status_posted: true });
      const winner = guest['winner'] as string;
      expect(['host', 'guest', 'draw']).toContain(winner);
      expect(host, show()).toContain(`session completed: winner ${winner}`);
      expect(session, show()).toMatchObject({
        session_id: guest['session_id'],
        post_id: guest['post_id'],
        status: 'closed',
        host_result: winner,
        guest_result: winner,
      });
    }, 300_000);
  }
});
