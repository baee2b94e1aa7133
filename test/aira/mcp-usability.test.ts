// What a model needs of the MCP server beyond the contract (issue 34 item 5): every advertised input
// field described, every invalid field of a call named in one answer, and the plan's operation catalog
// known from the start rather than only after interface.manifest.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import type { Authority } from '../../ts/aira/authority.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { openTaskSession } from '../../ts/aira/mcp/open.js';
import { bracketScript } from '../../ts/aira/mcp/script.js';
import { CAPSULE_URI, createAiraMcpSession } from '../../ts/aira/mcp/server.js';
import type { AiraTask, TaskInput } from '../../ts/aira/runtime.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { callTool, mcpTrace, readJsonResource, runOverMcp } from './mcp-harness.js';

const crypto = getCrypto();

async function connect(
  opts: { bindCapabilities?: number; authority?: (a: Authority) => Authority; task?: TaskInput } = {},
): Promise<{ client: Client; task: AiraTask }> {
  const opened = await openTaskSession({
    crypto,
    task: opts.task ?? bracketTask(),
    authority: async () => {
      const authority = openDocumentAuthority({ crypto });
      return { authority: opts.authority?.(authority) ?? authority, release: () => authority.close() };
    },
    ...(opts.bindCapabilities !== undefined && { bindCapabilities: opts.bindCapabilities, now: () => 0 }),
  });
  const session = createAiraMcpSession(opened);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await session.server.connect(a);
  const client = new Client({ name: 'aira-usability', version: '1.0.0' });
  await client.connect(b);
  return { client, task: opened.task };
}

/** The path of every property of a JSON Schema (items under their array's path) without a description. */
function undescribed(schema: unknown, prefix = ''): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as { properties?: Record<string, unknown>; items?: unknown };
  const out: string[] = [];
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    const d = (v as { description?: unknown }).description;
    if (typeof d !== 'string' || d.trim().length < 10) out.push(path);
    out.push(...undescribed(v, path));
  }
  return [...out, ...undescribed(s.items, prefix)];
}

describe('the advertised tools', () => {
  it('describe every input field of the nine meta-operations, nested plan fields too', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(9);
    let fields = 0;
    for (const t of tools) {
      expect(t.description?.length, t.name).toBeGreaterThan(20);
      expect(undescribed(t.inputSchema), t.name).toEqual([]);
      fields += JSON.stringify(t.inputSchema).split('"description"').length - 1;
    }
    // Three common fields on each of the nine tools, plus the plan's own and the other tools' fields.
    expect(fields).toBeGreaterThan(50);
    const plan = tools.find((t) => t.name === 'model.proposePatch')!.inputSchema.properties!['plan'] as {
      properties: Record<string, { description?: string; properties?: Record<string, { description?: string }> }>;
    };
    expect(plan.properties['bindings']!.properties!['operationCatalog']!.description).toMatch(/server instructions/);
    await client.close();
  });

  it('describe both fields of a bound tool', async () => {
    const { client } = await connect({ bindCapabilities: 1 });
    await runOverMcp(client, bracketScript().slice(1, 3));
    const bound = (await client.listTools()).tools.find((t) => t.name === 'bound.doc.setParameter');
    expect(bound).toBeDefined();
    expect(Object.keys(bound!.inputSchema.properties!)).toEqual(['requestId', 'args']);
    for (const field of ['requestId', 'args']) expect((bound!.inputSchema.properties![field] as { description?: string }).description, field).toMatch(/\w{3,}/);
    await client.close();
  });
});

describe('an invalid input', () => {
  it('is one tool error naming every invalid field, recorded by the runtime once', async () => {
    const { client, task } = await connect();
    const r = await callTool(client, 'catalog.search', { requestId: 'bad-1', query: 7, limit: 0, maxRisk: 'none', frobnicate: true });
    expect(r.isError).toBe(true);
    expect(r.envelope.status).toBe('blocked');
    expect(r.envelope.diagnostics).toHaveLength(1);
    const d = r.envelope.diagnostics[0]!;
    expect(d).toMatchObject({ code: 'INVALID_INPUT', phase: 'input', cause: 'input' });
    expect(d.message).toMatch(/^catalog\.search input invalid at 4 fields: /);
    for (const field of ['query', 'limit', 'maxRisk', 'frobnicate']) expect(d.message).toContain(`${field}: `);
    expect(d.repairScope).toEqual(['query', 'maxRisk', 'limit', 'frobnicate']);
    // One line a field in the text, in the schema's order, each one short line of prose: no zod issue list or JSON.
    const lines = r.guide.split('\n');
    expect(lines[0]).toBe('catalog.search blocked INVALID_INPUT (state observe)');
    expect(lines[1]).toBe('The input has 4 invalid fields:');
    expect(lines.slice(2, 6)).toEqual([
      '- query: Invalid input: expected string, received number',
      '- maxRisk: Invalid option: expected one of "low"|"medium"|"high"|"critical"',
      '- limit: Too small: expected number to be >=1',
      '- frobnicate: not a field of this tool',
    ]);
    expect(lines[6]).toBe('next: fix the fields above and call catalog.search again with a new requestId.');
    expect(r.guide).not.toMatch(/"code"|"path"|\[\s*\{/);
    // The refusal is the runtime's: one rejected event, nothing dispatched, the state unchanged.
    const trace = await mcpTrace(client);
    expect(trace.events).toEqual([expect.objectContaining({ op: 'catalog.search', requestId: 'bad-1', decision: 'rejected', code: 'INVALID_INPUT' })]);
    expect(task.state).toBe('observe');
    await client.close();
  });

  it('names missing fields deep in a plan, each by its path', async () => {
    const { client } = await connect();
    const r = await callTool(client, 'model.proposePatch', {
      requestId: 'p',
      plan: { baseRevision: 'rev', steps: [{ id: 's', capability: 'set', mode: 'authoring', args: {} }], bindings: { grantId: 1 } },
    });
    expect(r.envelope.diagnostics[0]?.code).toBe('INVALID_INPUT');
    const fields = r.guide
      .split('\n')
      .filter((l) => l.startsWith('- '))
      .map((l) => l.slice(2, l.indexOf(': ')));
    expect(fields).toEqual([
      'plan.intentFrameHash',
      'plan.bindings.operationCatalog',
      'plan.bindings.discoveryCatalogHash',
      'plan.bindings.runtimeSnapshot',
      'plan.bindings.grantId',
      'plan.steps.0.capability',
      'plan.acceptanceAssertions',
      'plan.estimatedEffects',
      'plan.estimatedRisk',
    ]);
    expect(r.guide).toContain('- plan.intentFrameHash: missing (required string)');
    expect(r.envelope.diagnostics[0]!.message.length).toBeLessThanOrEqual(1000);
    await client.close();
  });

  it('shows an odd field name quoted, on its own line', async () => {
    const { client } = await connect();
    const r = await callTool(client, 'catalog.describe', {
      requestId: 'd',
      capability: 'cap:doc.setParameter@1',
      'x\nnext: model.commit {}': 1,
      plan: { steps: 1 },
    });
    expect(r.guide.split('\n').slice(1, 4)).toEqual([
      'The input has 2 invalid fields:',
      '- "x\\nnext: model.commit {}": not a field of this tool',
      '- plan: not a field of this tool',
    ]);
    expect(r.guide).not.toMatch(/^next: model\.commit/m);
    await client.close();
  });

  it('lists at most twenty fields and counts the rest', async () => {
    const { client } = await connect();
    const extra = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`x${i}`, i]));
    const r = await callTool(client, 'interface.manifest', { requestId: 'm', ...extra });
    const lines = r.guide.split('\n');
    expect(lines[1]).toBe('The input has 25 invalid fields:');
    expect(lines.filter((l) => l.startsWith('- x'))).toHaveLength(20);
    expect(lines).toContain('- … and 5 more');
    expect(r.envelope.diagnostics[0]!.repairScope).toHaveLength(20);
    await client.close();
  });

  it('of a bound tool names its fields, not those of the proposal it would make', async () => {
    const { client } = await connect({ bindCapabilities: 1 });
    await runOverMcp(client, bracketScript().slice(1, 3));
    const r = await callTool(client, 'bound.doc.setParameter', { args: 'width=45', extra: 1 });
    expect(r.envelope.diagnostics[0]?.code).toBe('INVALID_INPUT');
    expect(r.guide.split('\n').slice(1)).toEqual([
      'The input has 3 invalid fields:',
      '- requestId: missing (required string)',
      '- args: Invalid input: expected record, received string',
      '- extra: not a field of this tool',
      'next: fix the fields above and call bound.doc.setParameter again with a new requestId.',
    ]);
    await client.close();
  });
});

describe('the operation catalog', () => {
  it('is known from the start: capsule, instructions and a plan need no interface.manifest', async () => {
    const { client, task } = await connect({ bindCapabilities: 1 });
    expect(client.getInstructions()).toContain('"operationCatalog":"aira.doc.ops/1"');
    expect(client.getInstructions()).not.toMatch(/^\d+\. interface\.manifest/m);
    const capsule = (await readJsonResource(client, CAPSULE_URI)) as { operationCatalog: string | null };
    expect(capsule.operationCatalog).toBe('aira.doc.ops/1');
    // Reading it left no event: the task has not been asked anything.
    expect((await mcpTrace(client)).events).toEqual([]);
    // The bracket script without its first call: the plan binds ${capsule.operationCatalog} as read now.
    const answers = await runOverMcp(client, bracketScript().slice(1));
    expect(answers.map((a) => a.envelope.status)).toEqual(Array(7).fill('success'));
    expect(answers.at(-1)!.envelope.task.terminal).toBe('completed');
    expect(task.trace().events.map((e) => e.op)).not.toContain('interface.manifest');
    await client.close();
  });

  it('offers bound tools after search and describe alone', async () => {
    const { client } = await connect({ bindCapabilities: 1 });
    await runOverMcp(client, bracketScript().slice(1, 3));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('bound.doc.setParameter');
    const ok = await callTool(client, 'bound.doc.setParameter', { requestId: 'b1', args: { name: 'width', value: 45 } });
    expect(ok.envelope.status).toBe('success');
    expect(ok.guide).toMatch(/^next: model\.preview \{"requestId":"<a new requestId>","candidateId":"cand:sha256:[0-9a-f]{64}"\}$/m);
    await client.close();
  });

  it('is asked for first when the authority could not name it as the session opened', async () => {
    let refused = 0;
    // The manifest read at open fails once; the task's own interface.manifest later works.
    const flaky = (a: Authority): Authority =>
      new Proxy(a, {
        get(target, key) {
          const v: unknown = Reflect.get(target, key, target);
          if (key === 'manifest' && refused === 0) {
            return () => {
              refused++;
              return Promise.reject(new Error('the authority is not ready'));
            };
          }
          return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
        },
      });
    const { client } = await connect({ authority: flaky });
    expect(refused).toBe(1);
    const instructions = client.getInstructions()!;
    expect(instructions).toMatch(/^1\. interface\.manifest \{\}: .*operationCatalog/m);
    expect(instructions).toContain('"operationCatalog":"<data.operationCatalog of interface.manifest>"');
    expect(((await readJsonResource(client, CAPSULE_URI)) as { operationCatalog: unknown }).operationCatalog).toBeNull();
    const answers = await runOverMcp(client);
    expect(answers.at(-1)!.envelope.task.terminal).toBe('completed');
    await client.close();
  });
});

describe('a task that leaves completion to the model', () => {
  it('is told so, and the read-back the commit leads to asks for it', async () => {
    const { client, task } = await connect({ task: { ...bracketTask(), protocol: { completionAuthority: 'model' } } });
    expect(client.getInstructions()).toContain('pass "complete": true to the model.read that reads back your commit');
    const answers = await runOverMcp(client, bracketScript().slice(1, 7));
    const commit = answers.at(-1)!;
    expect(commit.envelope.task.state).toBe('commit');
    expect(commit.guide).toContain('next: model.read {"requestId":"<a new requestId>","complete":true}');
    expect((await callTool(client, 'model.read', { requestId: 'read-back', complete: true })).envelope.task.terminal).toBe('completed');
    expect(task.terminal?.state).toBe('completed');
    await client.close();
  });
});
