/** What `aigenora host` and `aigenora join` read from their flags and the data directory. */
import { multiaddr } from '@multiformats/multiaddr';
import { getCrypto } from '../crypto/index.js';
import { HooksError, loadHooks } from '../hooks/load.js';
import type { ControlMode } from '../hooks/types.js';
import { IdentityError, loadIdentity } from '../library/identity.js';
import { resolveProtocol } from '../library/library.js';
import { MAX_SESSIONS_LIMIT, type Protocol } from '../net/session.js';
import { RealtimeError } from '../realtime/errors.js';
import { rulesetHashOfDir } from '../realtime/ruleset-dir.js';
import { RegistryClient, RegistryError } from '../registry/client.js';
import { loadSpec } from '../spec/index.js';
import { flowMode } from '../spec/types.js';
import { UsageError } from './args.js';

const CONTROL = ['autonomous', 'hybrid', 'human'];
/** A week: an invitation is a short-lived offer, and its expiry must stay a valid date. */
export const MAX_TTL_MINUTES = 7 * 24 * 60;
/** An invitation is about 1.5 KB; a file much larger is not one. */
export const MAX_INVITATION_BYTES = 64 << 10;

/** --control-mode: autonomous unless given. */
export function controlModeOf(flags: Record<string, unknown>): ControlMode {
  const control = (flags['control-mode'] as string | undefined) ?? 'autonomous';
  if (!CONTROL.includes(control)) throw new UsageError('--control-mode must be autonomous, hybrid or human');
  return control as ControlMode;
}

export function seconds(flags: Record<string, unknown>, name: string): number | undefined {
  if (flags[name] === undefined) return undefined;
  const n = Number(flags[name]);
  if (!(n > 0 && n <= 86_400)) throw new UsageError(`--${name} must be a number of seconds, above 0 and at most 86400`);
  return n;
}

/**
 * A group leader's turn deadline from --turn-timeout-seconds (0: turns are never timed out) or, for a
 * host, --timeout-seconds (the wait for each move, as in a two-party session); undefined leaves the
 * default. The protocol's own deadline, when it declares one, comes first (turnTimeoutFor).
 */
export function turnTimeout(flags: Record<string, unknown>, fallbackSeconds?: number): number | undefined {
  if (flags['turn-timeout-seconds'] === undefined) return fallbackSeconds === undefined ? undefined : Math.round(fallbackSeconds * 1000);
  const n = Number(flags['turn-timeout-seconds']);
  if (!(n >= 0 && n <= 86_400)) throw new UsageError('--turn-timeout-seconds must be a number of seconds from 0 (never) to 86400');
  return Math.round(n * 1000);
}

export function listenAddrs(flag: unknown): string[] | undefined {
  if (typeof flag !== 'string') return undefined;
  const addrs = flag.split(',').map((a) => a.trim());
  for (const a of addrs) {
    try {
      multiaddr(a);
    } catch {
      throw new UsageError(`--listen: ${JSON.stringify(a)} is not a multiaddr (e.g. /ip4/127.0.0.1/tcp/0 or /ip4/127.0.0.1/tcp/0/ws)`);
    }
  }
  return addrs;
}

export async function protocolFrom(dataDir: string, flags: Record<string, unknown>, expectId?: string): Promise<Protocol> {
  let dir: string;
  if (typeof flags['protocol-dir'] === 'string') dir = flags['protocol-dir'];
  else {
    const ref = (flags['protocol'] as string | undefined) ?? expectId;
    if (!ref) throw new UsageError('give --protocol-dir DIR or --protocol ALIAS');
    const r = resolveProtocol(dataDir, ref);
    if ('error' in r) throw new UsageError(r.error);
    dir = r.dir;
  }
  const c = getCrypto();
  const l = loadSpec(c, dir);
  if (!l.ok || !l.protocolId) throw new UsageError(`${dir}: ${l.issues.map((i) => `${i.code} at ${i.pointer}`).join('; ')}`);
  if (expectId && l.protocolId !== expectId) throw new UsageError(`${dir} is protocol ${l.protocolId}, the invitation names ${expectId}`);
  try {
    const hooks = await loadHooks(c, l.dir, l.spec, { allowSkeleton: flags['allow-skeleton-hooks'] === true });
    // Both sides of a realtime match must hold the same rule files (NOTES A17): the join names their hash.
    const rulesetHash = flowMode(l.spec) === 'authoritative_realtime' ? rulesetHashOfDir(c, l.dir) : undefined;
    return { spec: l.spec, specText: l.text, protocolId: l.protocolId, hooks, ...(rulesetHash && { rulesetHash }) };
  } catch (e) {
    if (e instanceof HooksError || e instanceof RealtimeError) throw new UsageError(e.message);
    throw e;
  }
}

export function identity(dataDir: string): Uint8Array {
  try {
    return loadIdentity(getCrypto(), dataDir).seed;
  } catch (e) {
    if (e instanceof IdentityError) throw new UsageError(`${e.message} (data dir ${dataDir})`);
    throw e;
  }
}

export function actionDelay(flags: Record<string, unknown>): number | undefined {
  if (flags['action-delay-ms'] === undefined) return undefined;
  const n = Number(flags['action-delay-ms']);
  if (!Number.isInteger(n) || n < 0 || n > 60_000) throw new UsageError('--action-delay-ms must be an integer from 0 to 60000');
  return n;
}

/** --max-sessions: how many sessions a --daemon host runs at once; undefined leaves the default. */
export function maxSessionsOf(flags: Record<string, unknown>, daemon: boolean): number | undefined {
  const v = flags['max-sessions'];
  if (v === undefined) return undefined;
  if (!daemon) throw new UsageError('--max-sessions is for --daemon (without it the host serves one session)');
  const n = Number(v);
  if (!(typeof v === 'string' && /^\d+$/.test(v) && n >= 1 && n <= MAX_SESSIONS_LIMIT))
    throw new UsageError(`--max-sessions must be an integer from 1 to ${MAX_SESSIONS_LIMIT}`);
  return n;
}

const TRANSPORTS = ['libp2p', 'iroh'] as const;
type TransportName = (typeof TRANSPORTS)[number];

export function transportOf(flags: Record<string, unknown>): TransportName | undefined {
  const t = flags['transport'];
  if (t === undefined) return undefined;
  if (!TRANSPORTS.includes(t as TransportName)) throw new UsageError('--transport must be libp2p or iroh');
  return t as TransportName;
}

export function registryClient(flags: Record<string, unknown>, seed: Uint8Array): RegistryClient | undefined {
  const server = flags['server'];
  if (typeof server !== 'string') return undefined;
  try {
    return new RegistryClient(server, seed, getCrypto());
  } catch (e) {
    if (e instanceof RegistryError) throw new UsageError(`--server: ${e.message}`);
    throw e;
  }
}
