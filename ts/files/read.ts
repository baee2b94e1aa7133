/**
 * Reading input files as a careful tool must: the size limit is enforced while reading (a 6 GB file or
 * /dev/zero is never buffered), only regular files unless the caller says otherwise (a FIFO would block,
 * a directory is a mistake), and text must be valid UTF-8 (a lossy decode would let different bytes
 * verify as the same text). Every refusal is a FileError with a stable code and a one-line message.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { concatBytes } from '../crypto/encoding.js';

export type FileErrorCode =
  'FILE_NOT_FOUND' | 'FILE_NOT_REGULAR' | 'FILE_TOO_LARGE' | 'FILE_UNREADABLE' | 'FILE_NOT_UTF8' | 'FILE_EXISTS' | 'FILE_WRITE_FAILED' | 'FILE_PERMISSIONS';

export class FileError extends Error {
  override readonly name = 'FileError';
  constructor(
    readonly code: FileErrorCode,
    readonly path: string,
    /** The message without its code, for callers that wrap it in an error of their own. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

export interface ReadOptions {
  /** Refuse (FILE_TOO_LARGE) anything longer; checked while reading. */
  maxBytes: number;
  /** Also read FIFOs, character devices and sockets (still bounded by maxBytes). */
  allowNonRegular?: boolean;
  /** Names the file in messages ("spec.json", "the envelope"); the path is always given. */
  what?: string;
}

function describe(path: string, what?: string): string {
  return what ? `${what} ${path}` : path;
}

/** The bytes of a file, refusing what ReadOptions says. */
export function readBytes(path: string, opts: ReadOptions): Uint8Array {
  const name = describe(path, opts.what);
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer must not hang before the type check below.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new FileError('FILE_NOT_FOUND', path, `${name} does not exist`);
    if (code === 'ELOOP') throw new FileError('FILE_UNREADABLE', path, `${name} is a symbolic link loop`);
    throw new FileError('FILE_UNREADABLE', path, `cannot open ${name} (${code ?? (e as Error).message})`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new FileError('FILE_NOT_REGULAR', path, `${name} is a directory, not a file`);
    if (!st.isFile() && !opts.allowNonRegular) throw new FileError('FILE_NOT_REGULAR', path, `${name} is not a regular file (a device, FIFO or socket)`);
    if (st.isFile() && st.size > opts.maxBytes) throw new FileError('FILE_TOO_LARGE', path, `${name} is ${st.size} bytes; the limit is ${opts.maxBytes}`);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(Math.min(opts.maxBytes + 1, 1 << 20));
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, Math.min(chunk.length, opts.maxBytes + 1 - total), null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') throw new FileError('FILE_UNREADABLE', path, `${name} has nothing to read yet (a FIFO with no writer?)`);
        if (code === 'EISDIR') throw new FileError('FILE_NOT_REGULAR', path, `${name} is a directory, not a file`);
        throw new FileError('FILE_UNREADABLE', path, `cannot read ${name} (${code ?? (e as Error).message})`);
      }
      if (n === 0) break;
      total += n;
      if (total > opts.maxBytes) throw new FileError('FILE_TOO_LARGE', path, `${name} is over the limit of ${opts.maxBytes} bytes`);
      chunks.push(Uint8Array.prototype.slice.call(chunk, 0, n));
    }
    return concatBytes(...chunks);
  } finally {
    closeSync(fd);
  }
}

/** Strict UTF-8 (a leading BOM is kept as U+FEFF, as JSON parsers then refuse it). */
export function decodeUtf8(bytes: Uint8Array, path: string, what?: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new FileError('FILE_NOT_UTF8', path, `${describe(path, what)} is not valid UTF-8`);
  }
}

export function readText(path: string, opts: ReadOptions): string {
  return decodeUtf8(readBytes(path, opts), path, opts.what);
}

/** readText as a verdict instead of a throw: what the offline verifiers report when evidence is unreadable. */
export function readEvidence(path: string, maxBytes: number, what: string): { ok: true; text: string } | { ok: false; reason: string } {
  try {
    return { ok: true, text: readText(path, { maxBytes, what }) };
  } catch (e) {
    if (e instanceof FileError) return { ok: false, reason: e.message };
    throw e;
  }
}
