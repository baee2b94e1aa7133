/** The --options flag shared by `protocol test` and `host`: JSON, then checked against spec.parameters. */
import { validateOptions, type Spec, type SpecIssue } from '../spec/index.js';
import { UsageError, type Output } from './args.js';

/** The options, or the errors that make them invalid (printed by `reportOptionErrors`). */
export function optionsFromFlag(flag: unknown, spec: Spec): { options: Record<string, unknown>; errors: SpecIssue[] } {
  if (flag === undefined) return { options: {}, errors: [] };
  let options: unknown;
  try {
    options = JSON.parse(String(flag));
  } catch {
    throw new UsageError('--options must be a JSON object');
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new UsageError('--options must be a JSON object');
  const errors = validateOptions(spec, options).issues.filter((i) => i.severity === 'error');
  return { options: options as Record<string, unknown>, errors };
}

/** `aigenora <command>: OPTIONS_INVALID: …` on stderr, then each problem on a line of its own; exit 1. */
export function reportOptionErrors(out: Output, errors: SpecIssue[]): number {
  const first = errors[0];
  out.refuse('OPTIONS_INVALID', `--options: ${errors.length} error(s)${first ? `, first ${first.code} at ${first.pointer || '/'}: ${first.message}` : ''}`);
  for (const e of errors) out.error(`error ${e.code} at ${e.pointer || '/'}: ${e.message}`);
  return 1;
}
