// A whole Aira task on the harbor driven by an MCP client over Streamable HTTP, against the same task run
// through the library: our control daemon in this process (one for the file), the harbor attached through
// our host agent and ticked only when an authority asks, each run on its own boat.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, vi } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { serveAiraMcpHttp } from '../../ts/aira/mcp/http.js';
import { openTaskSession } from '../../ts/aira/mcp/open.js';
import { runScript, type ScriptStep } from '../../ts/aira/mcp/script.js';
import { harborLoadTask } from '../../ts/aira/rin/index.js';
import { startTask } from '../../ts/aira/runtime.js';
import { Trace } from '../../ts/aira/schema.js';
import { serveOurDaemon } from '../interop/rin-harness.js';
import { mcpTrace, runOverMcp } from './mcp-harness.js';
import { HARBOR_LOAD_PATH, useRinWorld } from './rin-harness.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const crypto = getCrypto();
const world = useRinWorld(async () => {
  const served = await serveOurDaemon([]);
  return { url: served.url, stop: () => served.close() };
});

/** Load two crates, as a model would: discover, read, one-step plan, preview, validate, commit, read back. */
function loadScript(): ScriptStep[] {
  const candidateId = '${propose.data.candidateId}';
  return [
    { op: 'catalog.search', input: { requestId: 'search', query: 'load crates' } },
    { op: 'catalog.describe', input: { requestId: 'describe', capability: 'cap:harbor.load-cargo@1' } },
    { op: 'model.read', input: { requestId: 'read' } },
    {
      op: 'model.proposePatch',
      input: {
        requestId: 'propose',
        plan: {
          baseRevision: '${read.observedRevision}',
          intentFrameHash: '${capsule.intentFrameHash}',
          bindings: {
            // The library's capsule names the catalog only after interface.manifest, which this script skips
            // (an MCP session's capsule names it from the start; the same script runs through both).
            operationCatalog: 'aira.rin.ops/1',
            discoveryCatalogHash: '${search.data.catalogHash}',
            runtimeSnapshot: '${capsule.runtimeSnapshot}',
            grantId: '${capsule.grant.grantId}',
          },
          steps: [{ id: 'load', capability: 'cap:harbor.load-cargo@1', mode: 'authoring', args: { crates: 2 } }],
          acceptanceAssertions: ['cargo-loaded', 'still-docked'],
          estimatedEffects: [],
          estimatedRisk: 'low',
        },
      },
    },
    { op: 'model.preview', input: { requestId: 'preview', candidateId } },
    { op: 'model.validate', input: { requestId: 'validate', candidateId } },
    { op: 'model.commit', input: { requestId: 'commit', candidateId, validationToken: '${validate.data.validationToken}' } },
    { op: 'model.read', input: { requestId: 'read-back' } },
  ];
}

describe('a harbor task over MCP', () => {
  it('completes over Streamable HTTP with the trace of the same task run through the library', async () => {
    const task = { intentFrame: harborLoadTask(2) };

    const library = await startTask({ authority: world.authority('gull'), crypto, task });
    const libRun = await runScript(
      loadScript(),
      (op, input) => library.call({ op, input }),
      () => library.capsule(),
    );
    expect(libRun.calls.map((c) => c.envelope.status)).toEqual(Array(8).fill('success'));
    expect(library.terminal).toMatchObject({ state: 'completed', code: 'COMPLETED' });
    expect(world.attached.harbor.boat('gull').cargo).toBe(2);

    const served = await serveAiraMcpHttp({
      listen: '127.0.0.1:0',
      openSession: () => openTaskSession({ crypto, task, authority: async () => ({ authority: world.authority('tern'), release: async () => undefined }) }),
    });
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      const answers = await runOverMcp(client, loadScript());
      expect(
        answers.map((a) => a.envelope.status),
        JSON.stringify(answers.at(-1)?.envelope.diagnostics),
      ).toEqual(Array(8).fill('success'));
      const readBack = answers.at(-1)!.envelope;
      expect(readBack.task.terminal).toBe('completed');
      expect(readBack.certificateSummary).toMatchObject({ passed: true, assertions: 2 });
      expect(world.attached.harbor.boat('tern').cargo).toBe(2);
      const overMcp = await mcpTrace(client);
      const lib = library.trace();
      expect(Trace.safeParse(lib).success).toBe(true);
      expect(overMcp.events.map((e) => `${e.op}:${e.toState}`)).toEqual(HARBOR_LOAD_PATH);
      // The trace is the decision log (ops, states, decisions, effect classes, the terminal): no revision or
      // tick in it, so two boats at different world times give equal traces when the decisions agree.
      expect(overMcp).toEqual(lib);
      const effects = (calls: Array<{ effectsObserved: Array<{ kind: string; effectClass: string }> }>) =>
        calls.map((e) => e.effectsObserved.map((x) => `${x.kind}/${x.effectClass}`));
      expect(effects(answers.map((a) => a.envelope))).toEqual(effects(libRun.calls.map((c) => c.envelope)));
      expect(answers[6]!.envelope.effectsObserved.map((e) => e.kind)).toEqual(['harbor.cargo']);
    } finally {
      await client.close().catch(() => undefined);
      await served.close();
    }
  });
});
