/** `aigenora trade …`: agent-trade/0.2 envelopes from the shell. */
import { statSync } from 'node:fs';
import { fromBase64Url, fromUtf8, getCrypto, toBase64Url } from '../crypto/index.js';
import { checkSecretFile, FileError, readBytes } from '../files/index.js';
import {
  addSignature,
  catalogHash,
  createEnvelope,
  DEFAULT_MAX_BYTES,
  foldEvents,
  isObjectType,
  manifestOfDirectory,
  nowRfc3339,
  OBJECT_TYPES,
  uuidv7,
  verifyEnvelope,
  type Envelope,
  type KeyMap,
  type ObjectType,
  type Verdict,
} from '../trade/index.js';
import { UsageError, type Command } from './args.js';
import { readJson, writeFileAtomic, writeSecretFile } from './io.js';

const EXIT_OK = 0;
const EXIT_INVALID = 1;

/**
 * Steps 0–3 of verification on `env` as it will be once `signer` has signed, with a placeholder
 * signature and no keys: reaching "unknown signer" means protocol, body_hash and schema all hold.
 * Anything else is returned as the refusal's code (the verification's result, e.g. SCHEMA_INVALID).
 */
function signingRefusal(c: ReturnType<typeof getCrypto>, env: Envelope, signer: string, issuedAt: string): { code: string; verdict: Verdict } | undefined {
  const placeholder = { signer, algorithm: 'Ed25519' as const, signature: 'A'.repeat(86), issued_at: issuedAt };
  const verdict = verifyEnvelope(c, { ...env, signatures: [...(Array.isArray(env.signatures) ? env.signatures : []), placeholder] }, {});
  return verdict.result === 'fail:unknown_signer' ? undefined : { code: verdict.result.replace(/^fail:/, '').toUpperCase(), verdict };
}

function objectTypeArg(s: string | undefined): ObjectType {
  const t = s?.toUpperCase().replace(/-/g, '_');
  if (!isObjectType(t)) throw new UsageError(`object type must be one of ${OBJECT_TYPES.join(', ')} (or listing-ref, deal, trade-event, trade-receipt)`);
  return t;
}

function one(args: { positional: string[] }, what: string): string {
  if (args.positional.length !== 1) throw new UsageError(`expected one ${what}`);
  return args.positional[0]!;
}

function needString(flags: Record<string, unknown>, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A key map file: `{"<agentId>": {"public_key": "<base64url>"}}`, the shape of the vectors' identities. */
function readKeyMap(path: string): KeyMap {
  const doc = readJson(path);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new UsageError(`${path}: expected {"<agentId>": {"public_key": "<base64url>"}}`);
  for (const [id, v] of Object.entries(doc)) {
    const pk = (v as { public_key?: unknown } | null)?.public_key;
    if (typeof pk !== 'string') throw new UsageError(`${path}: ${id} has no public_key string`);
  }
  return doc as KeyMap;
}

interface KeyFile {
  signer?: string;
  public_key: string;
  seed: string;
}

function readKeyFile(path: string): KeyFile {
  checkSecretFile(path);
  const doc = readJson(path, 'key file') as Partial<KeyFile> | null;
  if (typeof doc?.seed !== 'string' || typeof doc.public_key !== 'string')
    throw new UsageError(`${path}: expected {"signer", "public_key", "seed"} (base64url)`);
  return doc as KeyFile;
}

/**
 * Verifies a file's bytes, not a decoding of them: the verifier's own gate then refuses invalid UTF-8,
 * and a file over its size limit is refused without being read whole. A valid envelope comes back
 * parsed from those same bytes, so what is used is exactly what was verified.
 */
function verifyFile(file: string, keys: KeyMap, opts: { objectId?: string } = {}): Verdict & { envelope?: Envelope } {
  let bytes: Uint8Array;
  try {
    bytes = readBytes(file, { maxBytes: DEFAULT_MAX_BYTES, what: 'envelope' });
  } catch (e) {
    if (e instanceof FileError && e.code === 'FILE_TOO_LARGE') return { result: 'fail:malformed_input', detail: e.message };
    throw e;
  }
  const v = verifyEnvelope(getCrypto(), bytes, keys, opts);
  return v.result === 'valid' ? { ...v, envelope: JSON.parse(fromUtf8(bytes)) as Envelope } : v;
}

export const tradeNew: Command = {
  name: 'new',
  usage: 'aigenora trade new <LISTING_REF|DEAL|TRADE_EVENT|TRADE_RECEIPT> --body FILE [--catalog DIR] [--out FILE] [--json]',
  help: `Computes body_hash (RFC 8785 + SHA-256) and writes {protocol, object_type, body, body_hash, signatures: []}.
A DEAL body without trade_id gets a fresh UUID v7; a LISTING_REF body without catalog_hash gets the
hash of --catalog DIR's manifest. Sign it with \`aigenora trade sign\`.`,
  flags: { body: 'string', catalog: 'string', out: 'string', json: 'boolean' },
  run(args, out) {
    const type = objectTypeArg(one(args, 'object type'));
    const body = readJson(needString(args.flags, 'body'));
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new UsageError('the body must be a JSON object');
    const b = body as Record<string, unknown>;
    const c = getCrypto();
    if (type === 'DEAL' && b['trade_id'] === undefined) b['trade_id'] = uuidv7();
    if (type === 'LISTING_REF' && b['catalog_hash'] === undefined && typeof args.flags['catalog'] === 'string')
      b['catalog_hash'] = catalogHash(c, manifestOfDirectory(c, args.flags['catalog']));
    const envelope = createEnvelope(c, type, b);
    // What trade sign would refuse is refused here, before a file exists that nobody can sign.
    const refused = signingRefusal(c, envelope, 'agent_placeholder', nowRfc3339());
    if (refused) {
      const { detail } = refused.verdict;
      out.refuse(refused.code, `the ${type} body would not verify${detail ? `: ${detail}` : ''}`);
      return EXIT_INVALID;
    }
    const text = `${JSON.stringify(envelope, null, 2)}\n`;
    const path = args.flags['out'];
    if (typeof path === 'string') writeFileAtomic(path, text);
    if (args.flags['json']) out.json({ ...(typeof path === 'string' ? { out: path } : { envelope }), object_type: type, body_hash: envelope.body_hash });
    else if (typeof path !== 'string') out.line(text.trimEnd());
    return EXIT_OK;
  },
};

export const tradeKeygen: Command = {
  name: 'keygen',
  usage: 'aigenora trade keygen --signer ID --out KEYFILE [--force] [--json]',
  help: 'Writes {"signer", "public_key", "seed"} (base64url) readable only by you, and prints the key map entry to share.',
  flags: { signer: 'string', out: 'string', force: 'boolean', json: 'boolean' },
  run(args, out) {
    const signer = needString(args.flags, 'signer');
    const path = needString(args.flags, 'out');
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const kp = getCrypto().ed25519Keypair(seed);
    const publicKey = toBase64Url(kp.publicKey);
    writeSecretFile(path, `${JSON.stringify({ signer, public_key: publicKey, seed: toBase64Url(seed) }, null, 2)}\n`, args.flags['force'] === true);
    seed.fill(0);
    kp.dispose();
    const entry = { [signer]: { public_key: publicKey } };
    if (args.flags['json']) out.json({ key_file: path, signer, public_key: publicKey, keys_entry: entry });
    else out.line(JSON.stringify(entry));
    return EXIT_OK;
  },
};

export const tradeSign: Command = {
  name: 'sign',
  usage: 'aigenora trade sign FILE --key KEYFILE [--signer ID] [--issued-at RFC3339] [--out FILE] [--json]',
  help: `Signs signing_input = protocol 0x00 object_type 0x00 body_hash and appends the signature; FILE is
rewritten in place (atomically) unless --out is given. Refuses a file whose body_hash does not match its
body, so a signature can never endorse a body other than the one shown.`,
  flags: { key: 'string', signer: 'string', 'issued-at': 'string', out: 'string', json: 'boolean' },
  run(args, out) {
    const file = one(args, 'envelope FILE');
    const env = readJson(file) as Envelope;
    const key = readKeyFile(needString(args.flags, 'key'));
    if (typeof env !== 'object' || env === null || Array.isArray(env)) {
      out.refuse('MALFORMED_INPUT', `refusing to sign ${file}: it is not an envelope (a JSON object)`);
      return EXIT_INVALID;
    }
    const signer = (args.flags['signer'] as string | undefined) ?? key.signer;
    if (!signer) throw new UsageError('the key file names no signer; pass --signer ID');
    const c = getCrypto();
    const issuedAt = (args.flags['issued-at'] as string | undefined) ?? nowRfc3339();
    const refused = signingRefusal(c, env, signer, issuedAt);
    if (refused) {
      // Nothing was signed: a refusal (stderr, with or without --json), its code the verification's result.
      const { result, detail } = refused.verdict;
      out.refuse(refused.code, `refusing to sign ${file}: ${result}${detail ? ` (${detail})` : ''}`);
      return EXIT_INVALID;
    }
    const kp = c.ed25519Keypair(fromBase64Url(key.seed));
    try {
      if (toBase64Url(kp.publicKey) !== key.public_key) throw new UsageError('the key file public_key does not match its seed');
      const signed = addSignature(env, kp, signer, issuedAt);
      const dest = (args.flags['out'] as string | undefined) ?? file;
      writeFileAtomic(dest, `${JSON.stringify(signed, null, 2)}\n`);
      if (args.flags['json']) out.json({ signed: true, out: dest, signer, signatures: signed.signatures.length });
    } finally {
      kp.dispose();
    }
    return EXIT_OK;
  },
};

export const tradeVerify: Command = {
  name: 'verify',
  usage: 'aigenora trade verify FILE [--keys KEYS.json] [--object-id ID] [--json]',
  help: `Checks, in order: protocol, body_hash, object_id (with --object-id), the JSON Schema of its object type,
then each signature strictly against KEYS.json ({"<agentId>": {"public_key": "<base64url>"}}).
Prints the first failure (fail:protocol_version, fail:body_hash_mismatch, fail:object_id_mismatch,
fail:schema_invalid, fail:unknown_signer, fail:signature_invalid; fail:malformed_input for text that
is too large or not strict JSON) or valid. Exit status 0 only for valid.`,
  flags: { keys: 'string', 'object-id': 'string', json: 'boolean' },
  run(args, out) {
    const file = one(args, 'envelope FILE');
    const keys = typeof args.flags['keys'] === 'string' ? readKeyMap(args.flags['keys']) : {};
    const oid = args.flags['object-id'];
    const v = verifyFile(file, keys, typeof oid === 'string' ? { objectId: oid } : {});
    if (args.flags['json']) out.json({ file, result: v.result, object_id: v.objectId, detail: v.detail });
    else {
      out.line(v.result);
      if (v.objectId) out.line(`object_id ${v.objectId}`);
      if (v.detail) out.line(`detail ${v.detail}`);
    }
    return v.result === 'valid' ? EXIT_OK : EXIT_INVALID;
  },
};

export const tradeState: Command = {
  name: 'state',
  usage: 'aigenora trade state EVENT_FILE... --keys KEYS.json [--json]',
  help: `Verifies each TRADE_EVENT (all must be valid and of one trade_id), then applies their event types in the
order given. Prints the final state, or the first refused transition and why; exit 1 on any failure.`,
  flags: { keys: 'string', json: 'boolean' },
  run(args, out) {
    if (args.positional.length === 0) throw new UsageError('expected at least one EVENT_FILE');
    const keys = readKeyMap(needString(args.flags, 'keys'));
    const types: string[] = [];
    let tradeId: unknown;
    for (const file of args.positional) {
      const v = verifyFile(file, keys);
      const env = v.envelope;
      const problem =
        v.result !== 'valid'
          ? `${v.result} (${v.detail ?? ''})`
          : env!.object_type !== 'TRADE_EVENT'
            ? `is a ${env!.object_type}, not a TRADE_EVENT`
            : undefined;
      if (problem) {
        if (args.flags['json']) out.json({ ok: false, file, error: problem });
        else out.line(`${file}: ${problem}`);
        return EXIT_INVALID;
      }
      const body = env!.body as { trade_id: string; event_type: string };
      tradeId ??= body.trade_id;
      if (body.trade_id !== tradeId) {
        const problem = `trade_id ${body.trade_id} differs from ${String(tradeId)}`;
        if (args.flags['json']) out.json({ ok: false, file, error: problem });
        else out.line(`${file}: ${problem}`);
        return EXIT_INVALID;
      }
      types.push(body.event_type);
    }
    const f = foldEvents(types);
    if (args.flags['json'])
      out.json({
        ok: f.ok,
        trade_id: tradeId,
        state: f.trade.state,
        events: types,
        ...(f.ok ? {} : { rejected: args.positional[f.rejectedAt], reason: f.reason }),
      });
    else if (f.ok) out.line(`${String(tradeId)} ${f.trade.state}`);
    else out.line(`${args.positional[f.rejectedAt]}: ${f.reason} (state stays ${f.trade.state})`);
    return f.ok ? EXIT_OK : EXIT_INVALID;
  },
};

export const tradeManifest: Command = {
  name: 'manifest',
  usage: 'aigenora trade manifest DIR [--json]',
  help: 'Lists every file under DIR as {path, sha256} (paths relative with "/", sorted by bytes) and prints catalog_hash = sha256 of its JCS.',
  flags: { json: 'boolean' },
  run(args, out) {
    const dir = one(args, 'DIR');
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${dir} is not a directory`);
    const c = getCrypto();
    const manifest = manifestOfDirectory(c, dir);
    const hash = catalogHash(c, manifest);
    if (args.flags['json']) out.json({ catalog_hash: hash, manifest });
    else {
      for (const f of manifest.files) out.line(`${f.sha256}  ${f.path}`);
      out.line(`catalog_hash ${hash}`);
    }
    return EXIT_OK;
  },
};
