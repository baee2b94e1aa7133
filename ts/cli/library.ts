/** `aigenora init`, `protocol path`, `protocol list`: the local data directory and protocol library. */
import { getCrypto } from '../crypto/index.js';
import { prepareDataDir, resolveDataDir } from '../library/data-dir.js';
import { ensureIdentity } from '../library/identity.js';
import { readIndex, resolveProtocol, seedBuiltins } from '../library/library.js';
import { UsageError, type Command } from './args.js';

const dataDirOf = (flags: Record<string, unknown>) => resolveDataDir(flags['data-dir'] as string | undefined);

export const init: Command = {
  name: 'init',
  usage: 'aigenora init [--data-dir DIR] [--json]',
  help: `Creates DIR (--data-dir, else $AIGENORA_DATA_DIR, $P2P_DATA_DIR or $AGENT_DIR, else ~/.aigenora) with mode 0700
(an existing one is narrowed to 0700), an identity in key.json (mode 0600; an existing one is kept, an
empty one left by a full disk is replaced, anything else that is not an identity is refused), and the
built-in protocols under protocols/<8 hex>/<56 hex>/ with protocols/index.json. Running it again refreshes
the built-ins; an index.json that cannot be read is rebuilt from the protocol directories.`,
  flags: { 'data-dir': 'string', json: 'boolean' },
  run(args, out) {
    const dir = dataDirOf(args.flags);
    const prepared = prepareDataDir(dir);
    const c = getCrypto();
    const id = ensureIdentity(c, dir);
    const { entries, rebuilt } = seedBuiltins(c, dir);
    if (args.flags['json'])
      out.json({
        data_dir: dir,
        public_key: id.publicKey,
        identity_created: id.created,
        identity_repaired: id.repaired,
        data_dir_narrowed: prepared.narrowed,
        index_rebuilt: rebuilt,
        protocols: entries.map((e) => ({ alias: e.alias, protocol_id: e.protocol_id })),
      });
    else {
      out.line(`data dir   ${dir}${prepared.narrowed ? ' (mode narrowed to 0700)' : ''}`);
      out.line(`identity   ${id.publicKey}${id.repaired ? ' (new: key.json was empty)' : id.created ? ' (new)' : ''}`);
      if (rebuilt) out.line('library    index.json could not be read and was rebuilt from the protocol directories');
      for (const e of entries) out.line(`protocol   ${e.alias.padEnd(16)} ${e.protocol_id}`);
    }
    return 0;
  },
};

export const protocolPath: Command = {
  name: 'path',
  usage: 'aigenora protocol path <protocol_id|prefix|alias> [--data-dir DIR] [--json]',
  help: 'Resolves an alias (rps-v1), a full protocol_id or an unambiguous prefix of 8+ hex digits.',
  flags: { 'data-dir': 'string', json: 'boolean' },
  run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected one protocol_id or alias');
    const r = resolveProtocol(dataDirOf(args.flags), args.positional[0]!);
    if ('error' in r) {
      // Nothing resolved: a refusal on stderr, with or without --json.
      out.refuse(r.error.startsWith('no protocol') ? 'PROTOCOL_NOT_FOUND' : 'PROTOCOL_AMBIGUOUS', r.error);
      return 1;
    }
    if (args.flags['json']) out.json({ ok: true, alias: r.entry.alias, protocol_id: r.entry.protocol_id, path: r.dir });
    else out.line(r.dir);
    return 0;
  },
};

export const protocolList: Command = {
  name: 'list',
  usage: 'aigenora protocol list [--data-dir DIR] [--json]',
  help: 'One line per protocol: alias, protocol_id, name.',
  flags: { 'data-dir': 'string', json: 'boolean' },
  run(args, out) {
    const index = readIndex(dataDirOf(args.flags));
    if (args.flags['json']) out.json(index.protocols.map((p) => ({ alias: p.alias, protocol_id: p.protocol_id, name: p.name, type: p.type, path: p.path })));
    else if (index.protocols.length === 0) out.line('no protocols (run: aigenora init)');
    else for (const p of index.protocols) out.line(`${p.alias.padEnd(16)} ${p.protocol_id}  ${p.name}`);
    return 0;
  },
};
