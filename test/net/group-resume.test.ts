// A member that crashed rebuilds itself from its own session directory (MemberCore.resume): its
// transcript replays into a fresh replica; a line cut by the crash is dropped; a directory of another
// identity or a file that is not a group transcript is refused with GROUP_NET_RESUME.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { runGroupLocal } from '../../ts/group/local.js';
import { loadSpec } from '../../ts/spec/index.js';
import communityRoom from '../../ts/protocols/community-room/hooks.js';
import { GroupNetError, MemberCore } from '../../ts/net/group.js';
import { tempDir } from '../shared/tmp.js';

const c = getCrypto('wasm');
const seeds = [1, 2, 3].map((i) => new Uint8Array(32).fill(i));
const autoplay = communityRoom.autoplay!;

async function session() {
  const l = loadSpec(c, new URL('../../ts/protocols/community-room', import.meta.url).pathname);
  const r = await runGroupLocal({
    crypto: c,
    spec: l.spec,
    specText: l.text,
    protocolId: l.protocolId!,
    hooks: communityRoom,
    members: 3,
    keySeeds: seeds,
    seed: 4,
    outDir: tempDir('group-resume'),
  });
  expect(r.completed).toBe(true);
  return r.members[1]!.dir;
}

describe('a member resumes from its own directory', () => {
  it('replays its transcript, drops a line the crash cut, and refuses another identity or a non-transcript', async () => {
    const dir = await session();
    const path = join(dir, 'transcript.jsonl');
    const whole = readFileSync(path, 'utf8');
    const entries = whole.trim().split('\n').length - 1;
    appendFileSync(path, '{"kind":"envelope","bootstrap":false,"envelope":{"_gro');
    const core = MemberCore.resume(c, seeds[1]!, dir, autoplay, () => 0.5);
    expect(readFileSync(path, 'utf8')).toBe(whole);
    expect(core.completed).toBe(true);
    expect(core.replica.seq).toBe(entries - 1);
    core.record.close();
    expect(() => MemberCore.resume(c, seeds[2]!, dir, autoplay, () => 0.5)).toThrow(/GROUP_NET_RESUME: .* is not this identity's group transcript/);
    writeFileSync(path, 'not json\n');
    expect(() => MemberCore.resume(c, seeds[1]!, dir, autoplay, () => 0.5)).toThrow(GroupNetError);
    expect(() => MemberCore.resume(c, seeds[1]!, join(dir, 'nope'), autoplay, () => 0.5)).toThrow(/holds no transcript\.jsonl/);
  });
});
