// The trade CLI end to end, as a user runs it: keygen → new → sign → co-sign → verify, tampering,
// state folding and manifests, with exit codes and file modes.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';

import { cli } from '../shared/cli.js';

const dir = tempDir('trade-cli');
const run = async (...args: string[]) => {
  const r = await cli(args, { cwd: dir });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const TRADE_ID = '019ad3f0-6a2e-7c41-9d3b-5f0e8a7b6c21';

describe('aigenora trade', () => {
  it('round-trips keygen → new → sign → co-sign → verify, and catches tampering', async () => {
    const pub: Record<string, unknown> = {};
    for (const who of ['agent_alice', 'agent_bob']) {
      const r = await run('trade', 'keygen', '--signer', who, '--out', `${who}.key`);
      expect(r.code, r.err).toBe(0);
      Object.assign(pub, JSON.parse(r.out));
      expect(statSync(join(dir, `${who}.key`)).mode & 0o777).toBe(0o600);
      expect(r.out).not.toMatch(/seed/);
    }
    expect((await run('trade', 'keygen', '--signer', 'x', '--out', 'agent_alice.key')).code).toBe(2); // no silent overwrite
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(pub));
    writeFileSync(
      join(dir, 'body.json'),
      JSON.stringify({
        buyer: 'agent_bob',
        seller: 'agent_alice',
        subject: { listing_ref: 'sha256:' + 'cd'.repeat(32), description: 'Ten recordings', quantity: 10, acceptance_conditions: ['FLAC'] },
        settlement: { asset: 'iso4217:EUR', amount: '125.50', method: 'manual' },
        fulfillment: { deadline: '2026-12-24T00:00:00Z', destination_ref: 'inbox', carrier_ref: 'email' },
      }),
    );
    expect((await run('trade', 'new', 'deal', '--body', 'body.json', '--out', 'deal.json')).code).toBe(0);
    // Writing to a device writes through it; an atomic rename would have replaced /dev/null itself.
    expect((await run('trade', 'new', 'deal', '--body', 'body.json', '--out', '/dev/null')).code).toBe(0);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'deal.json'), 'utf8')).body.trade_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    let v = await run('trade', 'verify', 'deal.json', '--keys', 'keys.json');
    expect([v.code, v.out.split('\n')[0]]).toEqual([1, 'fail:schema_invalid']); // no signature yet
    expect((await run('trade', 'sign', 'deal.json', '--key', 'agent_alice.key')).code).toBe(0);
    v = await run('trade', 'verify', 'deal.json', '--keys', 'keys.json');
    expect([v.code, v.out.split('\n')[0]]).toEqual([0, 'valid']);
    expect((await run('trade', 'sign', 'deal.json', '--key', 'agent_bob.key')).code).toBe(0);
    v = await run('trade', 'verify', 'deal.json', '--keys', 'keys.json', '--json');
    const verdict = JSON.parse(v.out);
    expect(verdict.result).toBe('valid');
    const env = JSON.parse(readFileSync(join(dir, 'deal.json'), 'utf8'));
    expect(env.signatures.map((s: { signer: string }) => s.signer)).toEqual(['agent_alice', 'agent_bob']);
    expect((await run('trade', 'verify', 'deal.json', '--keys', 'keys.json', '--object-id', verdict.object_id)).code).toBe(0);
    expect((await run('trade', 'verify', 'deal.json', '--keys', 'keys.json', '--object-id', 'sha256:' + '0'.repeat(64))).out).toMatch(
      /^fail:object_id_mismatch/,
    );

    writeFileSync(join(dir, 'only-alice.json'), JSON.stringify({ agent_alice: pub['agent_alice'] }));
    expect((await run('trade', 'verify', 'deal.json', '--keys', 'only-alice.json')).out).toMatch(/^fail:unknown_signer/);
    env.body.subject.quantity = 11;
    writeFileSync(join(dir, 'tampered.json'), JSON.stringify(env));
    v = await run('trade', 'verify', 'tampered.json', '--keys', 'keys.json');
    expect([v.code, v.out.split('\n')[0]]).toEqual([1, 'fail:body_hash_mismatch']);
    expect((await run('trade', 'sign', 'tampered.json', '--key', 'agent_bob.key')).code).toBe(1); // never signs a stale hash
    writeFileSync(
      join(dir, 'dup.json'),
      readFileSync(join(dir, 'deal.json'), 'utf8').replace('"buyer": "agent_bob"', '"buyer": "agent_bob", "buyer": "agent_eve"'),
    );
    expect((await run('trade', 'verify', 'dup.json', '--keys', 'keys.json')).out).toMatch(/^fail:malformed_input/);
  });

  it('folds verified events into a state and reports a refused transition', async () => {
    const events = ['DEAL_SIGNED', 'PAYMENT_REQUESTED', 'COMPLETED'];
    for (const [i, type] of events.entries()) {
      writeFileSync(
        join(dir, `b${i}.json`),
        JSON.stringify({ event_id: `e${i}`, trade_id: TRADE_ID, event_type: type, actor: 'agent_alice', occurred_at: '2026-12-01T00:00:00Z' }),
      );
      expect((await run('trade', 'new', 'trade-event', '--body', `b${i}.json`, '--out', `e${i}.json`)).code).toBe(0);
      expect((await run('trade', 'sign', `e${i}.json`, '--key', 'agent_alice.key')).code).toBe(0);
    }
    expect((await run('trade', 'sign', 'e0.json', '--key', 'agent_bob.key')).code).toBe(1); // single-signer object
    const ok = await run('trade', 'state', 'e0.json', 'e1.json', '--keys', 'keys.json');
    expect([ok.code, ok.out.trim()]).toEqual([0, `${TRADE_ID} PAYMENT_PENDING`]);
    const bad = await run('trade', 'state', 'e0.json', 'e1.json', 'e2.json', '--keys', 'keys.json', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ ok: false, state: 'PAYMENT_PENDING', rejected: 'e2.json' });
  });

  it('prints a manifest and usage errors with exit 2', async () => {
    const m = await run('trade', 'manifest', '.', '--json');
    expect(m.code).toBe(0);
    expect(JSON.parse(m.out).catalog_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await run('trade', 'verify')).code).toBe(2);
    expect((await run('trade', 'new', 'invoice', '--body', 'body.json')).code).toBe(2);
    const missing = await run('trade', 'verify', 'missing.json');
    expect(missing).toMatchObject({ code: 2, err: 'aigenora trade verify: FILE_NOT_FOUND: envelope missing.json does not exist\n' });
    expect((await run('trade', '--help')).code).toBe(0);
  });

  it('verifies the bytes of a file: invalid UTF-8 is malformed input, not a lossy decode that verifies', async () => {
    const good = readFileSync(join(dir, 'deal.json'));
    expect((await run('trade', 'verify', 'deal.json', '--keys', 'keys.json')).code).toBe(0);
    // Replace one ASCII byte inside a string value of the body with a lone continuation byte.
    const text = good.toString('utf8');
    const at = text.indexOf('Ten recordings') + 3;
    const bad = Buffer.from(good);
    bad[at] = 0x80;
    writeFileSync(join(dir, 'deal-bad-utf8.json'), bad);
    const r = await run('trade', 'verify', 'deal-bad-utf8.json', '--keys', 'keys.json', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ result: 'fail:malformed_input' });
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc((1 << 20) + 10, 0x20));
    expect(JSON.parse((await run('trade', 'verify', 'big.json', '--json')).out)).toMatchObject({ result: 'fail:malformed_input' });
  });

  it('refuses a key file others can read, without changing any mode', async () => {
    writeFileSync(join(dir, 'open.key'), readFileSync(join(dir, 'agent_alice.key')));
    chmodSync(join(dir, 'open.key'), 0o644);
    symlinkSync(join(dir, 'open.key'), join(dir, 'link.key'));
    for (const key of ['open.key', 'link.key']) {
      const r = await run('trade', 'sign', 'deal.json', '--key', key, '--out', 'never.json');
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/FILE_PERMISSIONS: key file .* is accessible by others \(mode 0644\); run: chmod 600/);
    }
    expect(statSync(join(dir, 'open.key')).mode & 0o777).toBe(0o644);
    expect(lstatSync(join(dir, 'link.key')).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).not.toContain('never.json');
  });

  it('trade new refuses a body that trade sign would refuse, with the schema problem, and writes nothing', async () => {
    const body = JSON.parse(readFileSync(join(dir, 'body.json'), 'utf8')) as Record<string, unknown>;
    delete body['settlement'];
    writeFileSync(join(dir, 'bad-body.json'), JSON.stringify(body));
    const r = await run('trade', 'new', 'deal', '--body', 'bad-body.json', '--out', 'never-deal.json');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^aigenora trade new: SCHEMA_INVALID: the DEAL body would not verify: .*settlement/);
    expect(readdirSync(dir)).not.toContain('never-deal.json');
  });

  it('writes atomically: no temporary files left behind, and a directory as --out is refused', async () => {
    expect((await run('trade', 'sign', 'deal.json', '--key', 'agent_alice.key', '--out', 'again.json')).code).toBe(0);
    expect((await run('trade', 'new', 'deal', '--body', 'body.json', '--out', 'deal2.json')).code).toBe(0);
    mkdirSync(join(dir, 'outdir'), { recursive: true });
    const r = await run('trade', 'new', 'deal', '--body', 'body.json', '--out', 'outdir');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/FILE_NOT_REGULAR: .*outdir is a directory/);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });
});
