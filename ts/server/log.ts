/**
 * Structured logs: one JSON object a line on stderr. Callers pass only fields that are safe to keep —
 * never signatures, request bodies, ciphertexts or key material (public keys and ids are fine).
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Log {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export function jsonLineLog(write: (line: string) => void = (l) => process.stderr.write(l), now: () => number = Date.now): Log {
  const emit = (level: string, event: string, fields?: LogFields): void => {
    write(`${JSON.stringify({ ts: new Date(now()).toISOString(), level, event, ...fields })}\n`);
  };
  return {
    info: (e, f) => emit('info', e, f),
    warn: (e, f) => emit('warn', e, f),
    error: (e, f) => emit('error', e, f),
  };
}

/** For tests that do not look at logs. */
export const silentLog: Log = { info() {}, warn() {}, error() {} };
