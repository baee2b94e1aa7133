/**
 * The one error type of the rin model and control plane. `code` is the control plane's stable code
 * (R68: each maps to one HTTP status); a model check that fails is `invalid` with the reference's
 * field path in `field`, and `message` is the reference's text, `<field>: <reason>`.
 */

export type RinCode =
  'invalid' | 'forbidden' | 'not_found' | 'lease_expired' | 'unavailable' | 'not_accepted' | 'lease_conflict' | 'stale' | 'conflict' | 'capacity' | 'internal';

/** Where a wire text was refused: it did not decode into the type, or the decoded value is invalid. */
export type RinStage = 'decode' | 'validate';

export const RIN_HTTP_STATUS: Readonly<Record<RinCode, number>> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  lease_expired: 410,
  unavailable: 410,
  not_accepted: 409,
  lease_conflict: 409,
  stale: 409,
  conflict: 409,
  capacity: 429,
  internal: 500,
};

export class RinError extends Error {
  override readonly name = 'RinError';
  constructor(
    readonly code: RinCode,
    message: string,
    readonly field?: string,
    readonly stage?: RinStage,
  ) {
    super(message);
  }
}

/** The reference's ValidationError: code invalid, message `field: reason`. */
export function invalid(field: string, reason: string): RinError {
  return new RinError('invalid', `${field}: ${reason}`, field, 'validate');
}

/** A wire text that does not decode into its type (unknown member, wrong JSON type, bad integer). */
export function decodeError(field: string, reason: string): RinError {
  return new RinError('invalid', field ? `${field}: ${reason}` : reason, field || undefined, 'decode');
}

/** The reference's prefixValidation: the same failure under an enclosing field. */
export function prefixed(prefix: string, e: unknown): unknown {
  if (e instanceof RinError && e.code === 'invalid' && e.field !== undefined) {
    const field = `${prefix}.${e.field}`;
    return new RinError('invalid', `${field}: ${e.message.slice(e.field.length + 2)}`, field, e.stage);
  }
  return e;
}

export const isRinError = (e: unknown, code?: RinCode): e is RinError => e instanceof RinError && (code === undefined || e.code === code);
