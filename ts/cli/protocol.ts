/** `aigenora protocol …` and `aigenora validate`: spec.json contracts from the shell. */
import { getCrypto } from '../crypto/index.js';
import { loadSpec, SpecLoadError, type LoadedSpec, type SpecIssue } from '../spec/index.js';
import { UsageError, type Command, type Output } from './args.js';

function load(target: string, allowUnknownVersion = false): LoadedSpec {
  try {
    return loadSpec(getCrypto(), target, { allowUnknownVersion });
  } catch (e) {
    if (e instanceof SpecLoadError) throw new UsageError(e.message);
    throw e;
  }
}

function printIssues(out: Output, issues: SpecIssue[]): void {
  for (const i of issues) out.line(`${i.severity === 'error' ? 'error' : 'warning'} ${i.code} at ${i.pointer || '/'}: ${i.message}`);
}

function one(positional: string[], what: string): string {
  if (positional.length !== 1) throw new UsageError(`expected one ${what}`);
  return positional[0]!;
}

export const protocolHash: Command = {
  name: 'hash',
  summary: 'print the protocol_id of a spec.json',
  usage: 'aigenora protocol hash <spec.json|DIR> [--json]',
  help: `protocol_id = SHA-256 of the contract subset (messages, flow, rules, choices, commit_reveal,
parameters without defaults, timing) serialised as the reference implementation does. An unknown
spec_version only warns here; every other command refuses it.`,
  flags: { json: 'boolean' },
  run(args, out) {
    const l = load(one(args.positional, 'spec.json or protocol directory'), true);
    if (!l.protocolId) {
      if (args.flags['json']) out.json({ path: l.path, ok: false, issues: l.issues });
      else printIssues(out, l.issues);
      return 1;
    }
    if (args.flags['json']) out.json({ path: l.path, protocol_id: l.protocolId, warnings: l.issues.filter((i) => i.code === 'SPEC_VERSION_UNSUPPORTED') });
    else {
      for (const w of l.issues.filter((i) => i.code === 'SPEC_VERSION_UNSUPPORTED')) process.stderr.write(`warning: ${w.message}\n`);
      out.line(l.protocolId);
    }
    return 0;
  },
};

export const protocolValidate: Command = {
  name: 'validate',
  summary: 'check a spec.json against every rule; lists all problems',
  usage: 'aigenora protocol validate <DIR|spec.json> [--json]',
  help: `Checks strict JSON, required name and messages, message names, directions and fields, every field
type and its limits, parameters and table columns, the flow mode and its configuration, exchanges
against declared messages, timing, decision, shadow_judge and spec_version. Each problem is printed
with its JSON pointer and a stable code. Exit status: 0 valid (warnings allowed), 1 invalid, 2 unreadable.`,
  flags: { json: 'boolean' },
  run(args, out) {
    const l = load(one(args.positional, 'protocol directory or spec.json'));
    if (args.flags['json']) out.json({ path: l.path, ok: l.ok, protocol_id: l.protocolId, name: l.ok ? l.spec.name : undefined, issues: l.issues });
    else {
      printIssues(out, l.issues);
      out.line(l.ok ? `valid: ${l.spec.name} (${l.protocolId})` : `invalid: ${l.issues.filter((i) => i.severity === 'error').length} error(s) in ${l.path}`);
    }
    return l.ok ? 0 : 1;
  },
};

/** `aigenora validate` is `aigenora protocol validate`. */
export const validateTop: Command = { ...protocolValidate, name: 'validate', usage: 'aigenora validate <DIR|spec.json> [--json]' };
