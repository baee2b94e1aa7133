/**
 * Our capability-schema verdicts against the reference's (issue 33 item 7), over the corpus of
 * rin-schema-corpus.ts: decimals at bounds, multipleOf with decimals, exact integer/const/enum/
 * uniqueItems, each regular-expression feature where JavaScript and Go part, `.` and `\s` on Unicode
 * and newlines, references without a scheme.
 *
 * Documents are judged by the reference Go control daemon itself: each is published as the input
 * schema of a capability (PublishWorld checks every spec, which compiles its schemas). The daemon never
 * checks an instance against a schema (binding arguments is the host's work), so instances are judged
 * by the reference's host package, unmodified, in a small Go program (rin-schema-judge/main.go):
 * Schema.ValidateInstance, what a Go host runs on arguments, outputs and effect attributes. It judges
 * the documents too, and must agree with the daemon.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RawJson } from '../../ts/crypto/gojson.js';
import { backend, goCanonical, sha256Hex } from '../../ts/rin/canon.js';
import { RinControlClient } from '../../ts/rin/client.js';
import { capabilitySpecDigest } from '../../ts/rin/digest.js';
import { RinError } from '../../ts/rin/errors.js';
import { newSchema, validateAgainstSchema } from '../../ts/rin/schema.js';
import { CONTROL_CONTRACT_VERSION, SCHEMA_DIALECT, type CapabilitySpec, type Schema } from '../../ts/rin/types.js';
import { harborCapabilities } from '../../ts/rin/world/catalog.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';
import { needCommand } from '../shared/require.js';
import { tempDir } from '../shared/tmp.js';
import { describeWithReference, PRINCIPAL, RIN_TOKEN, startGoDaemon, type Daemon } from './rin-harness.js';
import { SCHEMA_CORPUS, type SchemaCase } from './rin-schema-corpus.js';

interface GoVerdicts {
  schema: string;
  instances: string[];
}

/** Builds the judge (its module replaces github.com/sunrioa/rin with ../shared/reference/rin-src) into `dir`. */
function buildJudge(dir: string): string {
  const binary = join(dir, 'rin-schema-judge');
  const r = spawnSync('go', ['build', '-o', binary, '.'], {
    cwd: fileURLToPath(new URL('./rin-schema-judge/', import.meta.url)),
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`go build of test/interop/rin-schema-judge failed (${r.status}):\n${r.stderr || String(r.error)}`);
  return binary;
}

function judge(bin: string, corpus: readonly SchemaCase[]): GoVerdicts[] {
  const r = spawnSync(bin, {
    input: JSON.stringify(corpus.map((c) => ({ document: c.document, instances: c.instances }))),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`the schema judge failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as GoVerdicts[];
}

/** Each document as the input schema of a capability of one actor, published to the daemon: "ok" or its refusal. */
async function publishEach(url: string, corpus: readonly SchemaCase[]): Promise<string[]> {
  const c = new RinControlClient({ baseUrl: url, token: RIN_TOKEN });
  const host_id = 'schema-probe';
  const lease = await c.registerHost({
    contract_version: CONTROL_CONTRACT_VERSION,
    host_id,
    instance_id: 'instance.schema-probe',
    manifest: new HarborWorld({ owner: PRINCIPAL }).manifest(),
    lease_ttl_millis: 300_000,
  });
  const template = harborCapabilities()[0]!;
  const epoch = { session_id: 'schema-probe.session', world_id: 'schemas', host: 1, world: 1, timeline: 1 };
  const out: string[] = [];
  for (const [i, k] of corpus.entries()) {
    // Stored as our canonicalizer writes it (not through newSchema, which may refuse it: the daemon judges).
    const canonical = goCanonical(backend(), k.document);
    const input: Schema = { dialect: SCHEMA_DIALECT, document: new RawJson(canonical), sha256: sha256Hex(backend(), canonical) };
    const spec: CapabilitySpec = { ...template, input, digest: '' };
    spec.digest = capabilitySpecDigest(spec);
    const actor = {
      actor_id: 'probe',
      owner_principal_id: PRINCIPAL,
      display_name: 'Probe',
      observation_seq: 1,
      epoch,
      decision_authority: { source: 'internal' as const, revision: 1, persona_mode: 'character-bound' as const },
      state: new RawJson('{}'),
      capabilities: { revision: i + 1, specs: [spec] },
    };
    try {
      await c.publishWorld({
        host_id,
        lease_id: lease.lease_id,
        publication: { world_id: 'schemas', display_name: 'Schemas', sequence: i + 1, actors: [actor] },
      });
      out.push('ok');
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      // Anything but the schema refused means the probe itself is wrong: stop, do not count a verdict.
      if (!message.includes('input.schema.document')) throw new Error(`publishing case ${JSON.stringify(k.name)} was refused for another reason: ${message}`);
      out.push(`refused: ${message}`);
    }
  }
  return out;
}

/** Our verdict: "ok", or the refusal, which must be typed (RinError `invalid` on `field`). */
function ours(field: string, check: () => void): string {
  try {
    check();
    return 'ok';
  } catch (e) {
    if (!(e instanceof RinError) || e.code !== 'invalid' || e.field !== field) return `untyped: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
    return `refused: ${e.message}`;
  }
}

const ok = (verdict: string | undefined): boolean => verdict === 'ok';

describeWithReference("schema verdicts equal the reference's", () => {
  const goReady = needCommand('go', 'to build the reference schema judge', 'install Go; scripts/test.sh needs it for the rin daemon too');
  let daemon: Daemon | undefined;
  let bin: string;

  beforeAll(async () => {
    if (!goReady) return;
    bin = buildJudge(tempDir('rin-schema-judge'));
    daemon = await startGoDaemon(tempDir('rin-schema-go'));
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it.skipIf(!goReady)(`on ${SCHEMA_CORPUS.length} documents and their instances`, async () => {
    const go = judge(bin, SCHEMA_CORPUS);
    const published = await publishEach(daemon!.url, SCHEMA_CORPUS);
    // The daemon and the host package are one reference: they agree on every document.
    expect(published.map(ok)).toEqual(go.map((v) => ok(v.schema)));

    const differences: string[] = [];
    const untyped: string[] = [];
    let judged = 0;
    for (const [i, k] of SCHEMA_CORPUS.entries()) {
      let schema: Schema | undefined;
      const mine = ours('schema.document', () => (schema = newSchema(k.document)));
      judged += 1;
      if (mine.startsWith('untyped')) untyped.push(`${k.name}: document: ${mine}`);
      if (ok(mine) !== ok(published[i])) {
        differences.push(`${k.name}: document ${k.document}\n  reference: ${published[i]}\n  ours:      ${mine}`);
        continue;
      }
      if (!schema) continue;
      for (const [j, instance] of k.instances.entries()) {
        const theirs = go[i]!.instances[j];
        const verdict = ours('instance', () => validateAgainstSchema(schema!, instance));
        judged += 1;
        if (verdict.startsWith('untyped')) untyped.push(`${k.name}: ${instance}: ${verdict}`);
        // A panic of the reference (a number big.Rat cannot hold) accepts nothing.
        if (ok(verdict) !== ok(theirs)) differences.push(`${k.name}: instance ${instance}\n  reference: ${theirs}\n  ours:      ${verdict}`);
      }
    }
    console.log(`rin schema differential: ${SCHEMA_CORPUS.length} documents, ${judged} verdicts, ${differences.length} differences`);
    expect(differences.join('\n')).toBe('');
    expect(untyped).toEqual([]);
    // The corpus holds both verdicts for documents and for instances.
    const refusedDocuments = go.filter((v) => !ok(v.schema)).length;
    const instances = go.flatMap((v) => v.instances);
    expect([refusedDocuments > 10, refusedDocuments < SCHEMA_CORPUS.length - 10]).toEqual([true, true]);
    expect([instances.filter(ok).length > 30, instances.filter((v) => !ok(v)).length > 30]).toEqual([true, true]);
  });
});
