/** Problems found in a spec, with a JSON pointer into it, a stable code and a message a person can act on. */

export type Severity = 'error' | 'warning';

export interface SpecIssue {
  pointer: string;
  code: string;
  message: string;
  severity: Severity;
}

/** RFC 6901 pointer from path segments. */
export function pointer(...segments: (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export class Issues {
  readonly list: SpecIssue[] = [];
  error(at: string, code: string, message: string): void {
    this.list.push({ pointer: at, code, message, severity: 'error' });
  }
  warn(at: string, code: string, message: string): void {
    this.list.push({ pointer: at, code, message, severity: 'warning' });
  }
  get errors(): SpecIssue[] {
    return this.list.filter((i) => i.severity === 'error');
  }
  get warnings(): SpecIssue[] {
    return this.list.filter((i) => i.severity === 'warning');
  }
}

/**
 * No validator for a message schema: a build without ajv's compiler (the agent page) met a spec that
 * is not one of its precompiled built-ins.
 */
export class ValidatorUnavailable extends Error {
  override readonly name = 'ValidatorUnavailable';
  readonly code = 'VALIDATOR_NOT_PRECOMPILED';
}
