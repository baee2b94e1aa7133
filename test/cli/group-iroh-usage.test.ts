// How `host` and `join` pick the way into a group: a group with --server is the reference's (iroh and
// the registry's groups API), one without is ours over libp2p; the mixtures that cannot work end in one
// usage line before anything is opened or posted. (Groups played over iroh: test/net/group-iroh.test.ts
// and test/interop/reference-group.test.ts.)
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';

// Nothing listens there: a command that got as far as the registry would fail with another message.
const NOWHERE = 'http://127.0.0.1:9';

describe('a group over iroh, from the command line', () => {
  const dir = tempDir('group-iroh-usage');
  const data = join(dir, 'data');
  beforeAll(async () => {
    expect((await cli(['init', '--data-dir', data])).status).toBe(0);
  });

  const refused = async (args: string[]) => {
    const r = await cli([...args, '--data-dir', data]);
    expect(r.stdout).toBe('');
    return { status: r.status, err: r.stderr.trim() };
  };

  it('needs the registry: its groups API admits the members and arbitrates the leader', async () => {
    expect(await refused(['host', '--protocol', 'community-room-v1', '--transport', 'iroh'])).toEqual({
      status: 2,
      err: expect.stringMatching(/^aigenora host: USAGE: a group over iroh needs --server URL/),
    });
  });

  it('a group with --server is not a libp2p group, and has no invitation file to write', async () => {
    expect(await refused(['host', '--protocol', 'texas-holdem-v1', '--server', NOWHERE, '--transport', 'libp2p'])).toEqual({
      status: 2,
      err: expect.stringMatching(/a group with --server runs over iroh/),
    });
    // --server alone implies iroh for a group.
    expect(await refused(['host', '--protocol', 'community-room-v1', '--server', NOWHERE, '--invitation-file', join(dir, 'f')])).toEqual({
      status: 2,
      err: expect.stringMatching(/--invitation-file: an iroh group's invitation is its registry post/),
    });
    expect(await refused(['host', '--protocol', 'community-room-v1', '--server', NOWHERE, '--listen', '/ip4/127.0.0.1/tcp/0'])).toEqual({
      status: 2,
      err: expect.stringMatching(/--listen takes libp2p multiaddrs/),
    });
  });

  it('a two-party host with --server is unchanged: libp2p unless --transport iroh', async () => {
    expect(await refused(['host', '--protocol', 'rps-v1', '--server', NOWHERE, '--daemon'])).toEqual({
      status: 2,
      err: expect.stringMatching(/--server posts the invitation of one two-party session/),
    });
  });
});
