/**
 * A session on Node: the driver (driver.ts) with its record in files under the state directory
 * (record.ts), decisions from decision/decisions.jsonl (decision.ts) and the abort request that
 * `aigenora session abort` leaves as abort.request.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DecisionBus } from './decision.js';
import { driveSession, transcriptHeader, type DriverConfig } from './driver.js';
import { SessionRecord, type Durability } from './record.js';
import type { EndReason } from './core.js';
import type { Outcome } from './mode.js';

export { commitText } from './flow.js';
export { DEFAULT_MAX_FRAME_BYTES, type EndReason } from './core.js';

export interface SessionConfig extends Omit<DriverConfig, 'store' | 'decisions' | 'abortRequested'> {
  /** "process" (default): each frame is written before the next step; "fsync": also forced to disk. */
  durability?: Durability;
}

export interface SessionResult {
  completed: boolean;
  reason: EndReason;
  /** Who won a completed session: the one outcome the CLI prints and the registry is told. */
  outcome?: Outcome;
  detail?: string;
  sid: string;
  dir: string;
  /** Path of proof.json when the peer was caught cheating. */
  proof?: string;
}

export async function runSession(cfg: SessionConfig): Promise<SessionResult> {
  const { role, stateDir } = cfg;
  const store = new SessionRecord(stateDir, transcriptHeader(cfg), cfg.specText, cfg.durability);
  const decisions = (cfg.controlMode ?? 'hybrid') === 'autonomous' ? undefined : new DecisionBus(cfg.crypto, stateDir, `${role}:${cfg.sid.slice(0, 8)}`);
  const { proofFile, ...end } = await driveSession({
    ...cfg,
    store,
    ...(decisions && { decisions }),
    abortRequested: () => existsSync(join(stateDir, 'abort.request')),
  });
  return { ...end, dir: stateDir, ...(proofFile && { proof: join(stateDir, proofFile) }) };
}
