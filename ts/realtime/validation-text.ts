/**
 * The reference's wording of a spec refusal (`<field>: expected JSON array`, `<field>: below min 1`, …)
 * for our validator's errors. Its host puts that text in the `reason` of a rejected rt_command_ack, so
 * a peer reads the same reason from either implementation.
 */
import type { MessageError } from '../spec/messages.js';

export function referenceValidationText(errors: readonly MessageError[]): string {
  return errors
    .map((e) => {
      const field = e.pointer.replace(/^\//, '');
      const m = /^must be (>=|<=) (-?\d+)$/.exec(e.message);
      if (e.code === 'FIELD_RANGE' && m) return `${field}: ${m[1] === '>=' ? 'below min' : 'above max'} ${m[2]}`;
      const t = /^must be a JSON (array|object)$/.exec(e.message);
      if (e.code === 'FIELD_TYPE' && t) return `${field}: expected JSON ${t[1]}`;
      return `${field}: ${e.message}`;
    })
    .join('; ');
}
