/**
 * The ruleset hash of a protocol folder on disk, walked as the reference's `Path.rglob("*")` does:
 * symlinked folders are not entered, a symlink to a regular file counts as that file, and anything
 * that is not a regular file (a FIFO, a device) is left out. Every failure is a RealtimeError.
 */
import { lstatSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { RealtimeError } from './errors.js';
import { inRuleset, rulesetHash, type RulesetFile } from './ruleset.js';

/** Largest bundle read, all files together. */
export const MAX_RULESET_BYTES = 64 << 20;

const unreadable = (what: string, e: unknown) =>
  new RealtimeError('RT_RULESET_UNREADABLE', `${what}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);

export function rulesetFilesOfDir(dir: string): RulesetFile[] {
  let top: Stats;
  try {
    top = statSync(dir);
  } catch (e) {
    throw unreadable(`cannot read the protocol folder ${dir}`, e);
  }
  if (!top.isDirectory()) throw new RealtimeError('RT_RULESET_UNREADABLE', `${dir} is not a folder`);
  const files: RulesetFile[] = [];
  let total = 0;
  const walk = (abs: string, rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch (e) {
      throw unreadable(`cannot list ${abs}`, e);
    }
    for (const name of names) {
      const p = join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      let link: Stats;
      let st: Stats;
      try {
        link = lstatSync(p);
        st = link.isSymbolicLink() ? statSync(p) : link;
      } catch {
        continue; // a dangling symlink is no file, as is_file() says
      }
      if (st.isDirectory()) {
        if (!link.isSymbolicLink()) walk(p, r);
        continue;
      }
      if (!st.isFile() || !inRuleset(r)) continue;
      total += st.size;
      if (total > MAX_RULESET_BYTES)
        throw new RealtimeError('RT_RULESET_UNREADABLE', `the protocol folder holds more than ${MAX_RULESET_BYTES} bytes of rule files`);
      try {
        files.push({ path: r, bytes: readFileSync(p) });
      } catch (e) {
        throw unreadable(`cannot read ${p}`, e);
      }
    }
  };
  walk(dir, '');
  return files;
}

export function rulesetHashOfDir(crypto: Crypto, dir: string): string {
  return rulesetHash(crypto, rulesetFilesOfDir(dir));
}
