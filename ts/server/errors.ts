/**
 * Every error the registry answers with: an HTTP status, a stable machine code and one line of text.
 * The body is `{"code": "STABLE_CODE", "message": "one line"}` — the shape the reference client reads
 * (`error.get("code")`, `error.get("message")`). Anything else thrown inside a handler becomes a 500
 * INTERNAL with a fixed message, so no stack trace or driver text ever reaches a client.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ErrorBody {
  code: string;
  message: string;
}

export function errorBody(e: ApiError): ErrorBody {
  return { code: e.code, message: e.message };
}

export const badRequest = (code: string, message: string): ApiError => new ApiError(400, code, message);
export const notFound = (code: string, message: string): ApiError => new ApiError(404, code, message);
export const forbidden = (code: string, message: string): ApiError => new ApiError(403, code, message);
export const conflict = (code: string, message: string): ApiError => new ApiError(409, code, message);
export const unauthorized = (code: string, message: string): ApiError => new ApiError(401, code, message);
