/** The registry client's one error type: a stable code for callers to branch on, the HTTP status when there was one. */

export type RegistryErrorCode =
  | 'REGISTRY_BAD_URL'
  | 'REGISTRY_NO_SERVER'
  | 'REGISTRY_CONFIG_INVALID'
  | 'REGISTRY_BAD_ARGUMENT'
  | 'REGISTRY_UNREACHABLE'
  | 'REGISTRY_TIMEOUT'
  | 'REGISTRY_RESPONSE_TOO_LARGE'
  | 'REGISTRY_BAD_RESPONSE'
  | 'REGISTRY_SESSION_ID_MISMATCH'
  | 'REGISTRY_PROTOCOL_MISMATCH'
  | 'REGISTRY_POW_TOO_HARD'
  | 'INBOX_MESSAGE_TOO_LONG'
  | 'INBOX_OPEN_FAILED'
  | `REGISTRY_HTTP_${number}`;

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
    /** The HTTP status of the answer that caused it, when an answer came. */
    readonly status?: number,
    /** The `code` the server put in its error body, if any (untrusted text, already sanitised). */
    readonly serverCode?: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/**
 * Text from the server shown to a user: one line, printable, bounded. A hostile server must not be able
 * to paint the terminal (escape sequences) or forge extra output lines.
 */
export function sanitize(text: string, max = 200): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
