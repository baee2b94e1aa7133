// `aigenora host --daemon --max-sessions N`: the flag's checks, the cap as a real host process keeps it,
// and what a daemon keeps of the guests it has served (nothing, once they are gone).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInvitation } from '../../ts/net/invitation.js';
import { HandshakeError, host, join as joinSession } from '../../ts/net/session.js';
import { c } from '../engine/harness.js';
import { cli } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';
import { hostProcess, initDataDir, jsonLines, protocol, seed, until } from './helpers.js';

describe('aigenora host --max-sessions', () => {
  it('a value that is not an integer from 1 to 1000, or one without --daemon, is refused in one line', async () => {
    const out = tempDir('maxs');
    initDataDir(join(out, 'alice'));
    for (const bad of [['0'], ['-3'], ['abc'], ['1.5'], ['1e2'], ['1001'], ['']]) {
      const r = await cli(['host', '--protocol', 'coin-flip-v1', '--data-dir', join(out, 'alice'), '--daemon', '--max-sessions', ...bad]);
      expect(r.status, `--max-sessions ${bad.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe('aigenora host: USAGE: --max-sessions must be an integer from 1 to 1000');
      expect(r.stdout).toBe('');
    }
    const r = await cli(['host', '--protocol', 'coin-flip-v1', '--data-dir', join(out, 'alice'), '--max-sessions', '4']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('aigenora host: USAGE: --max-sessions is for --daemon (without it the host serves one session)');
  });

  it('with --max-sessions 2, two guests play at once, a third is refused as busy, and a later one is served', async () => {
    const out = tempDir('maxs');
    initDataDir(join(out, 'alice'));
    const opts = '{"best_of":3,"termination":"fixed_rounds"}';
    const h = await hostProcess(join(out, 'alice'), ['--protocol', 'rps-v1', '--options', opts, '--daemon', '--max-sessions', '2', '--json']);
    try {
      const p = await protocol('rps');
      const inv = parseInvitation(c, h.invitation);
      let connected = 0;
      // Hybrid guests hold each move for the protocol's min_think_seconds (1 s): their sessions stay open a few seconds.
      const guest = (n: number, controlMode: 'hybrid' | 'autonomous') =>
        joinSession({
          crypto: c,
          seed: seed(n),
          protocol: p,
          options: {},
          controlMode,
          sessionsDir: join(out, `g${n}`),
          invitation: inv,
          onEvent: (type) => void (type === 'connected' && connected++),
        });
      const playing = [guest(31, 'hybrid'), guest(32, 'hybrid')];
      await until(() => connected === 2, 'both guests to start their sessions', 15_000);
      await expect(guest(33, 'autonomous')).rejects.toSatisfy(
        (e) => e instanceof HandshakeError && e.code === 'HANDSHAKE_REFUSED' && /host busy/.test(e.message),
      );
      expect((await Promise.all(playing)).map((r) => r.completed)).toEqual([true, true]);
      await until(() => jsonLines(h.stdout()).length === 3, 'the host to report both sessions');
      expect((await guest(34, 'autonomous')).completed).toBe(true);
      await until(() => jsonLines(h.stdout()).length === 4, 'the host to report the later session');
      expect(jsonLines(h.stdout()).slice(1)).toEqual([0, 1, 2].map(() => expect.objectContaining({ completed: true })));
    } finally {
      h.child.kill('SIGTERM');
      await h.exited;
    }
  }, 40_000);

  it('a daemon host forgets each guest once it has gone: its peer store does not grow with the guests served', async () => {
    const out = tempDir('maxs');
    const p = await protocol('coin-flip');
    const h = await host({ crypto: c, seed: seed(40), protocol: p, options: { best_of: 1 }, sessionsDir: join(out, 'h'), daemon: true, maxSessions: 4 });
    try {
      const inv = parseInvitation(c, h.text);
      const played = await Promise.all(
        [41, 42, 43].map((n) => joinSession({ crypto: c, seed: seed(n), protocol: p, options: {}, sessionsDir: join(out, `g${n}`), invitation: inv })),
      );
      expect(played.map((r) => r.completed)).toEqual([true, true, true]);
      await h.idle();
      let peers = -1;
      const poll = () => void h.node.peerStore.all().then((all) => (peers = all.length));
      await until(() => (poll(), peers === 0 && h.node.getConnections().length === 0), 'the host to forget the guests it served');
    } finally {
      await h.stop();
    }
  });
});
