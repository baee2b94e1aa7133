// The reference agent (its Python CLI, ../shared/reference/aigenora-src) playing the net bench's game with
// itself over iroh: one reference hosts RPS 99 fixed rounds through our `aigenora server` registry, a
// second joins, both autonomous, inside the interop test's network namespace (only loopback up, so iroh
// neither tries its public relays nor leaves the machine). Timed from the joining side's own record of
// each round result, the side that sees every frame, as the net bench times ours.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findReference, namespaceMissing, openWorld, until, type World } from '../test/interop/harness.js';
import { refHost, refJoin } from '../test/interop/peer-commands.js';
import { median } from './measure.js';
import { OPTIONS } from './rps-workload.js';

const RPS = '43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f';
// A port of the bench's own namespace: nothing else listens in it.
const PORT = 18788;
const STEP_MS = 120_000;

/** ms since the epoch of the reference's ISO time stamp, keeping its microseconds (Date.parse drops them). */
function stampMs(ts: string): number {
  const frac = /\.(\d+)/.exec(ts)?.[1] ?? '';
  return Date.parse(ts.replace(/\.\d+/, '')) + Number(`0.${frac || '0'}`) * 1000;
}

export interface ReferenceSample {
  /** Round results the guest recorded. */
  rounds: number;
  /** From the guest's first round result to its last, ms. */
  ms: number;
  /** Median gap between consecutive round results, ms. */
  round: number;
  /** From starting the join command to its first round result (start-up, registry, iroh dial, handshake), ms. */
  setup: number;
  /** The join command, start to exit, ms. */
  total: number;
}

export interface ReferenceRps {
  session(): Promise<ReferenceSample>;
  close(): Promise<void>;
}

/** The reference pair, registered at our server and ready to play; a string says why it cannot run here. */
export async function openReferenceRps(root: string): Promise<ReferenceRps | string> {
  const ref = findReference();
  if ('missing' in ref) return `the reference agent is missing: ${ref.missing}`;
  const ns = namespaceMissing();
  if (ns) return `the reference agent needs ${ns}`;
  mkdirSync(root, { recursive: true });
  const w: World = await openWorld(ref, root, PORT, STEP_MS);
  const [a, b] = [join(root, 'ref-host'), join(root, 'ref-guest')];
  try {
    for (const [dir, nick] of [
      [a, 'bench-host'],
      [b, 'bench-guest'],
    ] as const) {
      w.initRef(dir);
      const r = await w.runRef(`reference register ${nick}`, dir, ['register', '--server', w.server, '--nickname', nick]);
      if (r.code !== 0) throw new Error(`reference register: ${r.out.trim().slice(-1000)}`);
    }
  } catch (e) {
    await w.close();
    throw e;
  }
  const sessions = join(b, 'tmp', 'aigenora-sessions');
  const protocolDir = join(a, 'protocols', RPS.slice(0, 8), RPS.slice(8));
  return {
    async session() {
      // One guest record per run: the sample reads the only one there.
      rmSync(sessions, { recursive: true, force: true });
      const host = w.startRef('reference host', a, refHost(w.server, protocolDir, ['--options', JSON.stringify(OPTIONS)]));
      const postId = () => /^post_id: (\S+)$/m.exec(host.stdout())?.[1];
      await until(() => postId() !== undefined || host.child.exitCode !== null, 'the reference host to post its invitation', 60_000);
      if (postId() === undefined) throw new Error(`the reference host posted nothing: ${host.output().trim().slice(-1000)}`);
      const t0 = Date.now();
      const joined = await w.runRef('reference join', b, refJoin(w.server, postId()!), STEP_MS);
      const total = Date.now() - t0;
      const hostCode = await host.exited;
      if (joined.code !== 0 || hostCode !== 0 || !/=== Game Over ===/.test(joined.out))
        throw new Error(`reference session failed (join ${joined.code}, host ${hostCode}): ${joined.out.trim().slice(-1000)}`);
      const [guestDir] = readdirSync(sessions);
      const at = readFileSync(join(sessions, guestDir!, 'details.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { type?: string; ts?: string })
        .filter((d) => d.type === 'round_result' && d.ts !== undefined)
        .map((d) => stampMs(d.ts!));
      if (at.length < 2) throw new Error(`the reference guest recorded ${at.length} round results`);
      return {
        rounds: at.length,
        ms: at[at.length - 1]! - at[0]!,
        round: median(at.slice(1).map((t, k) => t - at[k]!)),
        setup: at[0]! - t0,
        total,
      };
    },
    close: () => w.close(),
  };
}
