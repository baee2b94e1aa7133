/** `aigenora protocol …` and `aigenora validate`: spec.json contracts from the shell. */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCrypto, utf8 } from '../crypto/index.js';
import { findHooksFile, HooksError, instantiateHooks, loadHooks } from '../hooks/load.js';
import { HOOK_NAMES } from '../hooks/types.js';
import { flowMode } from '../spec/types.js';
import { sidecarFor, SIDECAR, skeletonSource } from '../hooks/skeleton.js';
import { builtinDir, BUILTINS, findBuiltin } from '../protocols/index.js';
import { loadSpec, messageValidator, SpecLoadError, type LoadedSpec, type SpecIssue, type WireDirection } from '../spec/index.js';
import { UsageError, type Args, type Command, type Output } from './args.js';
import { writeFileAtomic } from './io.js';

function load(target: string, allowUnknownVersion = false): LoadedSpec {
  try {
    return loadSpec(getCrypto(), target, { allowUnknownVersion });
  } catch (e) {
    if (e instanceof SpecLoadError) throw new UsageError(e.message);
    throw e;
  }
}

/** The problems of a spec: the result of `validate` (stdout), a refusal elsewhere (stderr). */
function printIssues(write: (line: string) => void, issues: SpecIssue[]): void {
  for (const i of issues) write(`${i.severity === 'error' ? 'error' : 'warning'} ${i.code} at ${i.pointer || '/'}: ${i.message}`);
}

/** A spec that is not valid where a valid one is needed: the CLI's one line, then each problem, on stderr. */
function refuseSpec(out: Output, l: LoadedSpec): void {
  const errors = l.issues.filter((i) => i.severity === 'error');
  out.refuse(
    'SPEC_INVALID',
    `${l.path} is not a valid spec: ${errors.length} error(s)${errors[0] ? `, first ${errors[0].code} at ${errors[0].pointer || '/'}` : ''}`,
  );
  printIssues(out.error, l.issues);
}

function one(positional: string[], what: string): string {
  if (positional.length !== 1) throw new UsageError(`expected one ${what}`);
  return positional[0]!;
}

export const protocolHash: Command = {
  name: 'hash',
  usage: 'aigenora protocol hash <spec.json|DIR> [--json]',
  help: `protocol_id = SHA-256 of the contract subset (messages, flow, rules, choices, commit_reveal,
parameters without defaults, timing) serialised as the reference implementation does. An unknown
spec_version only warns here; every other command refuses it.`,
  flags: { json: 'boolean' },
  run(args, out) {
    const l = load(one(args.positional, 'spec.json or protocol directory'), true);
    if (!l.protocolId) {
      // No id to print: a refusal (stderr), with or without --json; `validate --json` gives the issues as a result.
      refuseSpec(out, l);
      return 1;
    }
    if (args.flags['json']) out.json({ path: l.path, protocol_id: l.protocolId, warnings: l.issues.filter((i) => i.code === 'SPEC_VERSION_UNSUPPORTED') });
    else {
      for (const w of l.issues.filter((i) => i.code === 'SPEC_VERSION_UNSUPPORTED')) out.warn(w.message);
      out.line(l.protocolId);
    }
    return 0;
  },
};

const DIRECTIONS = ['host_to_guest', 'guest_to_host'] as const;

/** Checks one message against a valid spec: exit 0 valid, 1 invalid (every problem with its pointer and code). */
function validateMessage(l: LoadedSpec, text: string, flags: Args['flags'], out: Output): number {
  const direction = flags['direction'];
  if (direction !== undefined && !(DIRECTIONS as readonly unknown[]).includes(direction))
    throw new UsageError(`--direction must be ${DIRECTIONS.join(' or ')}`);
  const name = typeof flags['message'] === 'string' ? flags['message'] : undefined;
  if (!l.ok) {
    // The message cannot be checked at all: a refusal, exit 2 as for a spec that cannot be read.
    refuseSpec(out, l);
    return 2;
  }
  const r = messageValidator(l.protocolId!, l.spec, l.text).checkText(text, direction as WireDirection | undefined, name);
  if (flags['json']) out.json(r.ok ? { ok: true, protocol_id: l.protocolId, message: r.message } : { ok: false, protocol_id: l.protocolId, errors: r.errors });
  else if (r.ok) out.line(`valid: message "${r.message}" of ${l.spec.name}`);
  else {
    for (const e of r.errors) out.line(`error ${e.code} at ${e.pointer}: ${e.message}`);
    out.line(`invalid: ${r.errors.length} error(s)`);
  }
  return r.ok ? 0 : 1;
}

export const protocolValidate: Command = {
  name: 'validate',
  usage: "aigenora protocol validate <DIR|spec.json> ['<message-json>'] [--direction host_to_guest|guest_to_host] [--message NAME] [--json]",
  help: `With a spec alone: checks strict JSON, required name and messages, message names, directions and
fields, every field type and its limits, parameters and table columns, the flow mode and its
configuration, exchanges against declared messages, timing, decision, shadow_judge and spec_version.
With a message too: checks that message (JSON text) as a peer's message would be checked, on its
numbers as written (1.0 is not an integer): matched by its action and --direction (any direction when
absent), or by --message NAME. Each problem is printed with its JSON pointer and a stable code. Exit
status: 0 valid (warnings allowed), 1 invalid, 2 unreadable or usage.`,
  flags: { direction: 'string', message: 'string', json: 'boolean' },
  run(args, out) {
    if (args.positional.length < 1 || args.positional.length > 2) throw new UsageError('expected a protocol directory or spec.json, and optionally a message');
    const l = load(args.positional[0]!);
    if (args.positional.length === 2) return validateMessage(l, args.positional[1]!, args.flags, out);
    if (args.flags['direction'] !== undefined || args.flags['message'] !== undefined) throw new UsageError('--direction and --message need a message to check');
    if (args.flags['json']) out.json({ path: l.path, ok: l.ok, protocol_id: l.protocolId, name: l.ok ? l.spec.name : undefined, issues: l.issues });
    else {
      printIssues(out.line, l.issues);
      out.line(l.ok ? `valid: ${l.spec.name} (${l.protocolId})` : `invalid: ${l.issues.filter((i) => i.severity === 'error').length} error(s) in ${l.path}`);
    }
    return l.ok ? 0 : 1;
  },
};

/** `aigenora validate` is `aigenora protocol validate`. */
export const validateTop: Command = {
  ...protocolValidate,
  name: 'validate',
  usage: "aigenora validate <DIR|spec.json> ['<message-json>'] [--direction host_to_guest|guest_to_host] [--message NAME] [--json]",
};

/** Writes hooks.mts (a skeleton) and its sidecar for the spec in `dir`. */
function writeSkeleton(l: LoadedSpec): string {
  const text = skeletonSource(l.spec);
  // .mts: an ES module wherever the directory is, with or without a package.json around it.
  const file = join(l.dir, 'hooks.mts');
  writeFileAtomic(file, text);
  // The bytes that were read and checked (strict UTF-8 round-trips), not a second read of the path.
  const sidecar = sidecarFor(getCrypto(), text, utf8(l.text), l.protocolId!, l.spec);
  writeFileAtomic(join(l.dir, SIDECAR), JSON.stringify(sidecar));
  return file;
}

export const protocolScaffold: Command = {
  name: 'scaffold',
  usage: 'aigenora protocol scaffold <DIR> [--force] [--json]',
  help: `Writes DIR/hooks.mts for the spec's flow mode: every hook throws AIGENORA_SKELETON_NOT_IMPLEMENTED until
written, a doc comment lists the spec's constraints, and the module exports AIGENORA_SKELETON = true.
Also writes the sidecar .aigenora-hooks.json. The engine refuses to load the skeleton until it is
implemented (tests only: --allow-skeleton-hooks or AIGENORA_ALLOW_SKELETON_HOOKS=1). An existing
hooks module is kept unless --force.`,
  flags: { force: 'boolean', json: 'boolean' },
  run(args, out) {
    const l = load(one(args.positional, 'protocol directory'));
    if (!l.ok) {
      refuseSpec(out, l);
      return 1;
    }
    const existing = findHooksFile(l.dir);
    if (existing && !args.flags['force']) throw new UsageError(`${existing} exists; pass --force to replace it with a skeleton`);
    const file = writeSkeleton(l);
    if (args.flags['json']) out.json({ hooks: file, sidecar: join(l.dir, SIDECAR), protocol_id: l.protocolId });
    else out.line(`wrote ${file} and ${join(l.dir, SIDECAR)}: implement every hook, then delete the AIGENORA_SKELETON line`);
    return 0;
  },
};

export const protocolCreate: Command = {
  name: 'create',
  usage: 'aigenora protocol create <DIR> --from <template> [--name NAME] [--json]',
  help: `Copies the template's spec.json into DIR (a new or empty directory), renames it with --name, and writes a
hooks.mts skeleton to implement. Templates: ${BUILTINS.map((b) => b.alias).join(', ')} (or their folder names).`,
  flags: { from: 'string', name: 'string', json: 'boolean' },
  run(args, out) {
    const dir = one(args.positional, 'target directory');
    const from = args.flags['from'];
    const b = typeof from === 'string' ? findBuiltin(from) : undefined;
    if (!b) throw new UsageError(`--from must name a template: ${BUILTINS.map((x) => x.alias).join(', ')}`);
    if (existsSync(join(dir, 'spec.json'))) throw new UsageError(`${join(dir, 'spec.json')} exists; choose a new directory`);
    mkdirSync(dir, { recursive: true });
    const spec = JSON.parse(readFileSync(join(builtinDir(b), 'spec.json'), 'utf8')) as Record<string, unknown>;
    if (typeof args.flags['name'] === 'string') spec['name'] = args.flags['name'];
    writeFileAtomic(join(dir, 'spec.json'), `${JSON.stringify(spec, null, 2)}\n`);
    const l = load(dir);
    const file = writeSkeleton(l);
    if (args.flags['json']) out.json({ dir, protocol_id: l.protocolId, hooks: file });
    else out.line(`created ${dir} from ${b.alias} (protocol_id ${l.protocolId}); next: implement ${file}, then aigenora protocol validate ${dir}`);
    return 0;
  },
};

export const protocolHooks: Command = {
  name: 'hooks',
  usage: 'aigenora protocol hooks <DIR> [--allow-skeleton-hooks] [--json]',
  help: `Applies the checks the engine applies before a session: a pristine skeleton is refused with the hooks
still to write (any of: sidecar hashes unchanged, the AIGENORA_SKELETON sentinel, a NOT_IMPLEMENTED
marker, a legacy v005 banner), then the module must match the spec's flow mode and define every
required hook. --allow-skeleton-hooks (or AIGENORA_ALLOW_SKELETON_HOOKS=1) bypasses the skeleton check,
for tests only. Prints "ready: …" or "not ready: CODE: …" (--json: {"ok", …}). Exit status 0 ready,
1 refused, 2 unreadable.`,
  flags: { 'allow-skeleton-hooks': 'boolean', json: 'boolean' },
  async run(args, out) {
    const l = load(one(args.positional, 'protocol directory'));
    if (!l.ok) {
      refuseSpec(out, l);
      return 1;
    }
    const mode = flowMode(l.spec);
    try {
      const module = await loadHooks(getCrypto(), l.dir, l.spec, { allowSkeleton: args.flags['allow-skeleton-hooks'] === true });
      const hooks = instantiateHooks(module, {
        role: 'host',
        options: {},
        args: [],
        stateDir: l.dir,
        decision: null,
        random: Math.random,
      }) as unknown as Record<string, unknown>;
      const names = [...HOOK_NAMES[mode].required, ...HOOK_NAMES[mode].optional];
      const implemented = names.filter((n) => typeof hooks[n] === 'function');
      if (args.flags['json']) out.json({ ok: true, flow_mode: mode, implemented });
      else out.line(`ready: ${mode} hooks (${implemented.join(', ')})`);
      return 0;
    } catch (e) {
      if (!(e instanceof HooksError)) throw e;
      // The check's negative answer is its result (stdout), as validate's and trade verify's are.
      if (args.flags['json']) out.json({ ok: false, code: e.code, message: e.message, pending: e.pending });
      else out.line(`not ready: ${e.message.startsWith(`${e.code}: `) ? e.message : `${e.code}: ${e.message}`}`);
      return 1;
    }
  },
};
