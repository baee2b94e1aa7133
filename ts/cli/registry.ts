/**
 * The registry commands: register, browse, cancel, inbox send|list|read|delete, protocol
 * register|fetch|search. Text from the server is printed one line per item, with control characters
 * removed (a hostile server or sender must not drive the terminal); --json prints it as received.
 */
import { closeSync, constants, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { getCrypto } from '../crypto/index.js';
import { resolveDataDir } from '../library/data-dir.js';
import { protocolsDir, resolveProtocol, storagePath } from '../library/library.js';
import type { Invitation, InvitationType } from '../registry/client.js';
import { INBOX_MAX_CHARS } from '../registry/client.js';
import { rememberServer } from '../registry/config.js';
import { sanitize } from '../registry/errors.js';
import { INVITATION_TYPES } from '../registry/invitation.js';
import { openRegistry } from '../registry/open.js';
import { loadSpec, SpecLoadError } from '../spec/index.js';
import { intFlag, stringFlag, UsageError, type Command, type FlagKind } from './args.js';
import { writeFileAtomic } from './io.js';

type Flags = Record<string, string | boolean | undefined>;

const COMMON: Record<string, FlagKind> = { server: 'string', 'data-dir': 'string', json: 'boolean' };
const COMMON_USAGE = '[--server URL] [--data-dir DIR] [--json]';
const SERVER_HELP =
  'The server is --server URL, else $AIGENORA_SERVER or $P2P_SERVER, else "server" in $AIGENORA_CONFIG or in <data dir>/config.json (register remembers it there).';

const dataDirOf = (flags: Flags) => resolveDataDir(flags['data-dir'] as string | undefined);
const str = stringFlag;

function registry(flags: Flags) {
  const dataDir = dataDirOf(flags);
  return { dataDir, ...openRegistry(getCrypto(), dataDir, str(flags, 'server')) };
}

function onePositional(args: { positional: string[] }, what: string): string {
  if (args.positional.length !== 1) throw new UsageError(`expected one ${what}`);
  return args.positional[0]!;
}

/**
 * A message as its sender wrote it, lines and tabs kept, but without the characters that would let a
 * sender drive the terminal (escape sequences, other controls, bidirectional overrides): each becomes U+FFFD.
 */
const terminalSafe = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, '\ufffd');

const show = (v: unknown, max = 80) => sanitize(typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v), max);

export const registerCommand: Command = {
  name: 'register',
  usage: `aigenora register --nickname N [--bio B] ${COMMON_USAGE}`,
  help: `Registers this agent's identity (key.json) at a registry: fetches a challenge, solves its proof of work, and posts
the signed registration. Registering again is harmless (the server answers that the key is known). The server is
remembered in <data dir>/config.json for later commands. ${SERVER_HELP}`,
  flags: { nickname: 'string', bio: 'string', ...COMMON },
  async run(args, out) {
    if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const nickname = str(args.flags, 'nickname');
    if (!nickname) throw new UsageError('--nickname is required');
    const { dataDir, client, server } = registry(args.flags);
    const r = await client.register(nickname, str(args.flags, 'bio') ?? '');
    rememberServer(dataDir, server.url);
    if (args.flags['json']) out.json({ public_key: client.publicKey, server: server.url, already_registered: r.alreadyRegistered, answer: r.answer });
    else out.line(`${r.alreadyRegistered ? 'already registered' : 'registered'} ${client.publicKey} at ${server.url}`);
    return 0;
  },
};

function invitationLine(i: Invitation): string {
  const tags = Array.isArray(i.tags) ? i.tags.map((t) => show(t, 64)).join(',') : '';
  return [
    show(i.post_id, 128),
    show(i.type ?? 'chat', 16),
    show(i.protocol_id, 64),
    show(i.public_key, 64),
    JSON.stringify(show(i.message, 120)),
    tags && `tags=${tags}`,
  ]
    .filter((p) => p !== '')
    .join('  ');
}

export const browseCommand: Command = {
  name: 'browse',
  usage: `aigenora browse [--protocol ID|ALIAS] [--type supply|demand|chat] [--tag T[,T…]] [--limit N] [--post-id ID] ${COMMON_USAGE}`,
  help: `Lists the open invitations at the registry, one line each: post_id, type, protocol_id, host public key, message,
tags. --protocol takes a protocol_id or an alias from the local library; --tag filters on tags (comma-separated,
all must match); --post-id shows one invitation. ${SERVER_HELP}`,
  flags: { protocol: 'string', type: 'string', tag: 'string', limit: 'string', 'post-id': 'string', ...COMMON },
  async run(args, out) {
    if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const type = str(args.flags, 'type');
    if (type !== undefined && !(INVITATION_TYPES as readonly string[]).includes(type))
      throw new UsageError(`--type must be one of ${INVITATION_TYPES.join(', ')}`);
    const limit = intFlag(args.flags, 'limit', 1, 100);
    const tags = str(args.flags, 'tag')
      ?.split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (tags !== undefined && tags.length === 0) throw new UsageError('--tag cannot be empty');
    const { dataDir, client } = registry(args.flags);
    let protocolId = str(args.flags, 'protocol');
    if (protocolId !== undefined && !/^[0-9a-f]{64}$/.test(protocolId)) {
      const r = resolveProtocol(dataDir, protocolId);
      if ('error' in r) throw new UsageError(`--protocol: ${r.error}`);
      protocolId = r.entry.protocol_id;
    }
    const postId = str(args.flags, 'post-id');
    const { items, total } = postId
      ? { items: [await client.getInvitation(postId)], total: 1 }
      : await client.browse({
          ...(protocolId && { protocolId }),
          ...(type && { type: type as InvitationType }),
          ...(tags && { tags }),
          ...(limit !== undefined && { limit }),
        });
    if (args.flags['json']) out.json({ total, results: items });
    else for (const i of items) out.line(invitationLine(i));
    return 0;
  },
};

export const cancelCommand: Command = {
  name: 'cancel',
  usage: `aigenora cancel POST_ID ${COMMON_USAGE}`,
  help: `Withdraws one of this agent's invitations from the registry. ${SERVER_HELP}`,
  flags: { ...COMMON },
  async run(args, out) {
    const postId = onePositional(args, 'POST_ID');
    const { client } = registry(args.flags);
    await client.cancelInvitation(postId);
    if (args.flags['json']) out.json({ cancelled: postId });
    else out.line(`cancelled ${postId}`);
    return 0;
  },
};

/**
 * The local outbox the reference keeps (plaintext, as only the sender could read the box it sent): one
 * JSON line per message, created 0600, never through a symbolic link.
 */
function appendOutbox(dataDir: string, entry: Record<string, unknown>): void {
  const fd = openSync(join(dataDir, 'outbox.jsonl'), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(entry)}\n`);
  } finally {
    closeSync(fd);
  }
}

export const inboxSend: Command = {
  name: 'send',
  usage: `aigenora inbox send --to PUBLIC_KEY --message TEXT ${COMMON_USAGE}`,
  help: `Seals TEXT (at most ${INBOX_MAX_CHARS} characters) to the recipient's Ed25519 key with the AGBX1 box and leaves it at the
registry, which stores only the ciphertext. A copy in plaintext is appended to <data dir>/outbox.jsonl (mode 0600).
${SERVER_HELP}`,
  flags: { to: 'string', message: 'string', ...COMMON },
  async run(args, out) {
    if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const to = str(args.flags, 'to');
    const message = str(args.flags, 'message');
    if (!to || !/^[0-9a-f]{64}$/.test(to)) throw new UsageError('--to must be the recipient public key (64 lowercase hex)');
    if (message === undefined) throw new UsageError('--message is required');
    if ([...message].length > INBOX_MAX_CHARS) throw new UsageError(`--message exceeds ${INBOX_MAX_CHARS} characters (the inbox's limit for one message)`);
    const { dataDir, client } = registry(args.flags);
    const r = await client.inboxSend(to, message);
    try {
      appendOutbox(dataDir, { ts: new Date().toISOString(), to, message, id: r.id ?? null, expires_at: r.expires_at ?? null });
    } catch (e) {
      // The message is delivered; a missing local copy must not read as a failed send.
      out.warn(`outbox not written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (args.flags['json']) out.json({ id: r.id ?? null, to, expires_at: r.expires_at ?? null });
    else out.line(`sent ${show(r.id ?? '?', 128)} to ${to}${r.expires_at ? ` (expires ${show(r.expires_at, 40)})` : ''}`);
    return 0;
  },
};

export const inboxList: Command = {
  name: 'list',
  usage: `aigenora inbox list [--limit N] [--cursor C] ${COMMON_USAGE}`,
  help: `The messages waiting for this agent, one line each: id, size, created, expires (read one with inbox read ID).
A last line "next_cursor C" means more follow (--cursor C). ${SERVER_HELP}`,
  flags: { limit: 'string', cursor: 'string', ...COMMON },
  async run(args, out) {
    if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const limit = intFlag(args.flags, 'limit', 1, 100);
    const cursor = str(args.flags, 'cursor');
    const { client } = registry(args.flags);
    const r = await client.inboxList({ ...(limit !== undefined && { limit }), ...(cursor !== undefined && { cursor }) });
    if (args.flags['json']) out.json({ entries: r.entries, next_cursor: r.nextCursor ?? null });
    else {
      for (const e of r.entries) out.line(`${show(e.id, 128)}  ${e.size ?? '?'} bytes  created ${show(e.created_at, 40)}  expires ${show(e.expires_at, 40)}`);
      if (r.nextCursor) out.line(`next_cursor ${show(r.nextCursor, 512)}`);
    }
    return 0;
  },
};

export const inboxRead: Command = {
  name: 'read',
  usage: `aigenora inbox read ID ${COMMON_USAGE}`,
  help: `Fetches message ID and opens it with this agent's key; prints the plaintext. A box that does not open with this
key (addressed to someone else, or altered) is refused with INBOX_OPEN_FAILED. ${SERVER_HELP}`,
  flags: { ...COMMON },
  async run(args, out) {
    const id = onePositional(args, 'message ID');
    const { client } = registry(args.flags);
    const r = await client.inboxRead(id);
    if (args.flags['json']) out.json({ id: r.id, plaintext: r.plaintext });
    else out.line(terminalSafe(r.plaintext));
    return 0;
  },
};

export const inboxDelete: Command = {
  name: 'delete',
  usage: `aigenora inbox delete ID ${COMMON_USAGE}`,
  help: `Deletes message ID from this agent's inbox at the registry. ${SERVER_HELP}`,
  flags: { ...COMMON },
  async run(args, out) {
    const id = onePositional(args, 'message ID');
    const { client } = registry(args.flags);
    await client.inboxDelete(id);
    if (args.flags['json']) out.json({ deleted: id });
    else out.line(`deleted ${id}`);
    return 0;
  },
};

export const protocolRegister: Command = {
  name: 'register',
  usage: `aigenora protocol register PROTOCOL_DIR|SPEC_JSON ${COMMON_USAGE}`,
  help: `Publishes a spec.json at the registry (the spec is checked here first; the server recomputes its protocol_id).
Publishing one the server knows already is harmless. ${SERVER_HELP}`,
  flags: { ...COMMON },
  async run(args, out) {
    const target = onePositional(args, 'protocol directory or spec.json');
    let loaded;
    try {
      loaded = loadSpec(getCrypto(), target);
    } catch (e) {
      // A path that cannot be read as a spec is a usage mistake (exit 2), as for every other spec command.
      if (e instanceof SpecLoadError) throw new UsageError(e.message);
      throw e;
    }
    if (!loaded.ok || !loaded.protocolId) {
      const issues = loaded.issues.filter((i) => i.severity === 'error');
      throw new UsageError(
        `${loaded.path} is not a valid spec: ${issues
          .slice(0, 3)
          .map((i) => `${i.code} at ${i.pointer || '/'}`)
          .join('; ')}${issues.length > 3 ? ` (+${issues.length - 3} more)` : ''}`,
      );
    }
    const { client, server } = registry(args.flags);
    const r = await client.registerProtocol(loaded.text);
    if (args.flags['json']) out.json({ protocol_id: r.protocolId, server: server.url, already_registered: r.alreadyRegistered, answer: r.answer });
    else out.line(`${r.alreadyRegistered ? 'already registered' : 'registered'} ${r.protocolId} at ${server.url}`);
    return 0;
  },
};

export const protocolFetch: Command = {
  name: 'fetch',
  usage: `aigenora protocol fetch PROTOCOL_ID [--out DIR] [--force] ${COMMON_USAGE}`,
  help: `Downloads a spec from the registry, recomputes its protocol_id and refuses it unless it is PROTOCOL_ID (the server is
not trusted). Writes DIR/spec.json (default: the library's place for it, <data dir>/protocols/<8 hex>/<56 hex>/).
A different spec.json already there is kept unless --force. Hooks are not fetched: write them (protocol scaffold). ${SERVER_HELP}`,
  flags: { out: 'string', force: 'boolean', ...COMMON },
  async run(args, out) {
    const id = onePositional(args, 'PROTOCOL_ID');
    if (!/^[0-9a-f]{64}$/.test(id)) throw new UsageError('PROTOCOL_ID must be 64 lowercase hex characters');
    const { dataDir, client } = registry(args.flags);
    const r = await client.fetchProtocol(id);
    const dir = resolve(str(args.flags, 'out') ?? join(protocolsDir(dataDir), storagePath(id)));
    const path = join(dir, 'spec.json');
    const st = statSync(path, { throwIfNoEntry: false });
    const same = st?.isFile() && st.size < 8 << 20 && readFileSync(path, 'utf8') === r.specText;
    if (st && !same && args.flags['force'] !== true) throw new UsageError(`${path} exists with other content; pass --force to replace it`);
    if (!same) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileAtomic(path, r.specText);
    }
    if (args.flags['json']) out.json({ protocol_id: id, path });
    else out.line(`${id} ${path}`);
    return 0;
  },
};

export const protocolSearch: Command = {
  name: 'search',
  usage: `aigenora protocol search [QUERY] [--limit N] [--max-pages N] [--cursor C] ${COMMON_USAGE}`,
  help: `Searches the registry's protocol directory, newest first, one line each: protocol_id, name, description. QUERY is
matched here against name and description over at most --max-pages pages (default 5 with a QUERY, else 1) of
--limit protocols (default 20). A last line "next_cursor C" means more follow. ${SERVER_HELP}`,
  flags: { limit: 'string', 'max-pages': 'string', cursor: 'string', ...COMMON },
  async run(args, out) {
    if (args.positional.length > 1) throw new UsageError('expected at most one QUERY (quote words together)');
    const limit = intFlag(args.flags, 'limit', 1, 100);
    const maxPages = intFlag(args.flags, 'max-pages', 1, 50);
    const cursor = str(args.flags, 'cursor');
    const { client } = registry(args.flags);
    const r = await client.searchProtocols(args.positional[0], {
      ...(limit !== undefined && { limit }),
      ...(maxPages !== undefined && { maxPages }),
      ...(cursor !== undefined && { cursor }),
    });
    if (args.flags['json']) out.json({ results: r.results, next_cursor: r.nextCursor ?? null });
    else {
      for (const p of r.results) out.line(`${p.protocol_id}  ${show(p.name, 40)}  ${show(p.description, 80)}`);
      if (r.nextCursor) out.line(`next_cursor ${show(r.nextCursor, 512)}`);
    }
    return 0;
  },
};
