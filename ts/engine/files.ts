/**
 * Reading evidence files (transcripts, receipts, proofs) that anyone may have handed over: regular
 * files only (a FIFO or a device would hang or never end), at most `maxBytes` read whatever the file
 * claims to be, strict UTF-8. Failures are values, not exceptions, so a verifier reports them as its
 * result.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

export type ReadResult = { ok: true; text: string } | { ok: false; reason: string };

export function readEvidence(path: string, maxBytes: number): ReadResult {
  let fd: number;
  try {
    // Non-blocking, so that opening a FIFO does not wait for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return { ok: false, reason: `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  try {
    if (!fstatSync(fd).isFile()) return { ok: false, reason: `${path} is not a regular file` };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) return { ok: false, reason: `${path} is over the ${maxBytes}-byte limit` };
    }
    try {
      return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)) };
    } catch {
      return { ok: false, reason: `${path} is not UTF-8` };
    }
  } catch (e) {
    return { ok: false, reason: `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
