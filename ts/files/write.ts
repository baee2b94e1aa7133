/**
 * Writing files so that a crash, a full disk or a concurrent reader never sees half of one: the data
 * goes to a temporary file beside the target, is forced to disk, then renamed (or hard-linked, to
 * create without replacing) into place; the temporary file is removed whatever happens.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FileError } from './read.js';

function tempBeside(path: string): string {
  const rand = Math.floor(Math.random() * 0x100000000)
    .toString(16)
    .padStart(8, '0');
  return join(dirname(path), `.${basename(path)}.${process.pid}.${rand}.tmp`);
}

function writeTemp(path: string, data: string | Uint8Array, mode: number): string {
  const tmp = tempBeside(path);
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', mode);
  } catch (e) {
    throw new FileError('FILE_WRITE_FAILED', path, `cannot write in ${dirname(path)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw new FileError('FILE_WRITE_FAILED', path, `cannot write ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  closeSync(fd);
  return tmp;
}

function syncDir(path: string): void {
  try {
    const fd = openSync(dirname(path), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has still happened.
  }
}

/**
 * Replaces `path` atomically. An existing path that is a device, FIFO or socket (/dev/null,
 * /dev/stdout) is written in place, since renaming onto it would replace the device itself; a
 * directory is refused.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st?.isDirectory()) throw new FileError('FILE_NOT_REGULAR', path, `${path} is a directory; name a file to write`);
  if (st && !st.isFile()) {
    writeFileSync(path, data);
    return;
  }
  const tmp = writeTemp(path, data, mode);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new FileError('FILE_WRITE_FAILED', path, `cannot write ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  syncDir(path);
}

/** Creates `path` complete or not at all, never replacing an existing file (FILE_EXISTS). */
export function createFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = writeTemp(path, data, mode);
  try {
    linkSync(tmp, path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new FileError('FILE_EXISTS', path, `${path} exists`);
    throw new FileError('FILE_WRITE_FAILED', path, `cannot create ${path} (${code ?? (e as Error).message})`);
  } finally {
    rmSync(tmp, { force: true });
  }
  syncDir(path);
}

/**
 * Refuses a secret file that others may read or write, as ssh does with private keys. Nothing is
 * chmod'ed: through a symbolic link that would change some other file.
 */
export function checkSecretFile(path: string, what = 'key file'): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new FileError('FILE_NOT_FOUND', path, `${what} ${path} does not exist`);
  if (!st.isFile()) throw new FileError('FILE_NOT_REGULAR', path, `${what} ${path} is not a regular file`);
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0)
    throw new FileError(
      'FILE_PERMISSIONS',
      path,
      `${what} ${path} is accessible by others (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${path}`,
    );
}

/**
 * Makes `dir` (0700) and proves it can take a file, so that a command fails before it makes promises
 * (an invitation published, a peer dialled) rather than when it first has to write.
 */
export function ensureWritableDir(dir: string, what = 'directory'): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new FileError('FILE_WRITE_FAILED', dir, `cannot create the ${what} ${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const probe = tempBeside(join(dir, 'probe'));
  try {
    writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
  } catch (e) {
    throw new FileError('FILE_WRITE_FAILED', dir, `cannot write in the ${what} ${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  } finally {
    rmSync(probe, { force: true });
  }
}
