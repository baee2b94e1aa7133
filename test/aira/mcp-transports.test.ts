// The official SDK client drives `aigenora aira mcp` over stdio and over Streamable HTTP: the same scripted
// bracket task must leave a trace identical to the one the library alone gives.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { META_OPS, OP_INPUTS, type Trace } from '../../ts/aira/schema.js';
import { tempDir } from '../shared/tmp.js';
import { BIN, callTool, libraryTrace, mcpTrace, runOverMcp, startCli, stopCli } from './mcp-harness.js';

// Each server is a new Node process (tsx compiles the CLI on start): slow on a loaded machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

/** A JSON Schema without the `description` strings the server adds to the contract's. */
function withoutDescriptions(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDescriptions);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(k === 'description' && typeof x === 'string'))
      .map(([k, x]) => [k, withoutDescriptions(x)]),
  );
}

let reference: Trace;
beforeAll(async () => {
  reference = await libraryTrace();
});

describe('the library reference run', () => {
  it('completes the bracket task through the whole completion sequence', () => {
    expect(reference.terminal?.state).toBe('completed');
    expect(reference.terminal?.code).toBe('COMPLETED');
    expect(reference.events.map((e) => e.op)).toEqual([
      'interface.manifest',
      'catalog.search',
      'catalog.describe',
      'model.proposePatch',
      'model.preview',
      'model.validate',
      'model.commit',
      'model.read',
    ]);
    expect(reference.events.every((e) => e.decision === 'scheduled')).toBe(true);
    expect(reference.events.at(-1)?.toState).toBe('readBack');
  });
});

describe('aigenora aira mcp over stdio', () => {
  let client: Client;
  let transport: StdioClientTransport;
  beforeAll(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'aira', 'mcp'], stderr: 'pipe' });
    client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 180_000 });
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists exactly the nine meta-operations, with the contract schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...META_OPS].sort());
    for (const t of tools) {
      const op = t.name as (typeof META_OPS)[number];
      // The advertised input schema is the zod contract's JSON Schema, nothing hand-written but the fields' descriptions.
      const { $schema: _a, ...expected } = z.toJSONSchema(OP_INPUTS[op], { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
      const { $schema: _b, ...advertised } = withoutDescriptions(t.inputSchema) as Record<string, unknown>;
      expect(advertised, op).toEqual(expected);
      expect(t.inputSchema.required).toContain('requestId');
      expect(t.outputSchema?.required).toEqual(
        expect.arrayContaining(['requestId', 'observedRevision', 'status', 'diagnostics', 'nextActions', 'budgets', 'task']),
      );
    }
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['aira://task/capsule', 'aira://task/trace']);
  });

  it('runs the scripted bracket task to completed, with the trace of the library run', async () => {
    const answers = await runOverMcp(client);
    expect(answers.map((a) => a.envelope.status)).toEqual(Array(8).fill('success'));
    expect(answers.every((a) => !a.isError)).toBe(true);
    const last = answers.at(-1)!;
    expect(last.envelope.task.terminal).toBe('completed');
    expect(last.text).toMatch(/^model\.read success .*task completed\)$/);
    expect(await mcpTrace(client)).toEqual(reference);
  });

  it('refuses any call once the task has ended, and says so in an envelope', async () => {
    const a = await callTool(client, 'catalog.search', { requestId: 'after-end' });
    expect(a.envelope.status).toBe('blocked');
    expect(a.envelope.diagnostics[0]?.code).toBe('TASK_TERMINAL');
    expect(a.isError).toBe(true);
  });
});

describe('aigenora aira mcp over Streamable HTTP', () => {
  let url: URL;
  let stop: () => Promise<number | null>;
  beforeAll(async () => {
    const { child, line } = await startCli(['aira', 'mcp', '--http', '127.0.0.1:0', '--json'], /"url"/);
    const ready = JSON.parse(line) as { url: string; authority: string; store: string };
    expect(ready.authority).toBe('doc');
    expect(ready.store).toBe('memory');
    url = new URL(ready.url);
    expect(url.hostname).toBe('127.0.0.1');
    stop = () => stopCli(child);
  });
  afterAll(async () => {
    if (stop) expect(await stop()).toBe(0);
  });

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(url);
    const client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 180_000 });
    return { client, transport };
  }

  it('runs the scripted bracket task in one session with the trace of the library run', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/\S/);
    const answers = await runOverMcp(client);
    expect(answers.at(-1)?.envelope.task.terminal).toBe('completed');
    expect(await mcpTrace(client)).toEqual(reference);
    await transport.terminateSession();
    await client.close();
  });

  it('gives every session its own task: a second session starts afresh', async () => {
    const a = await connect();
    const b = await connect();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    const first = await callTool(a.client, 'catalog.search', { requestId: 's' });
    expect(first.envelope.task.state).toBe('discover');
    expect((await mcpTrace(b.client)).events).toEqual([]);
    // The same requestId is new in the other session's task.
    expect((await callTool(b.client, 'catalog.search', { requestId: 's' })).envelope.status).toBe('success');
    for (const s of [a, b]) {
      await s.transport.terminateSession();
      await s.client.close();
    }
  });

  it('answers commit before validate with VALIDATION_REQUIRED and the operation to call next', async () => {
    const { client, transport } = await connect();
    const steps = (await import('../../ts/aira/mcp/script.js')).bracketScript().slice(0, 5);
    const answers = await runOverMcp(client, steps);
    expect(answers.at(-1)?.envelope.task.state).toBe('preview');
    const candidateId = answers[3]!.envelope.data['candidateId'] as string;
    const r = await callTool(client, 'model.commit', { requestId: 'commit-early', candidateId, validationToken: `vtok:sha256:${'0'.repeat(64)}` });
    expect(r.isError).toBe(true);
    expect(r.envelope.status).toBe('blocked');
    expect(r.envelope.diagnostics).toHaveLength(1);
    expect(r.envelope.diagnostics[0]).toMatchObject({ code: 'VALIDATION_REQUIRED', phase: 'admission', cause: 'protocol', severity: 'error' });
    expect(r.envelope.data).toEqual({
      completedPrefix: ['catalog.search', 'catalog.describe', 'model.proposePatch', 'model.preview'],
      nextOperation: 'model.validate',
    });
    expect(r.envelope.nextActions).toEqual([{ op: 'model.validate', preconditions: [] }]);
    expect(r.envelope.task.state).toBe('preview');
    expect(r.text).toBe('model.commit blocked VALIDATION_REQUIRED -> next model.validate (state preview)');
    const trace = await mcpTrace(client);
    expect(trace.events.at(-1)).toMatchObject({
      requestId: 'commit-early',
      decision: 'rejected',
      code: 'VALIDATION_REQUIRED',
      fromState: 'preview',
      toState: 'preview',
    });
    await transport.terminateSession();
    await client.close();
  });
});

describe('aigenora aira mcp on a database store', () => {
  it('keeps every session on one PGlite store, each task with its own nonce', async () => {
    const dir = tempDir('aira-mcp-db');
    const { child, line } = await startCli(['aira', 'mcp', '--http', '127.0.0.1:0', '--data-dir', dir, '--json'], /"url"/);
    try {
      const ready = JSON.parse(line) as { url: string; store: string };
      expect(ready.store).toBe(`pglite ${join(dir, 'aira', 'db')}`);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const transport = new StreamableHTTPClientTransport(new URL(ready.url));
        const client = new Client({ name: 'aira-test', version: '1.0.0' });
        await client.connect(transport, { timeout: 180_000 });
        const answers = await runOverMcp(client);
        expect(answers.at(-1)?.envelope.task.terminal).toBe('completed');
        const trace = await mcpTrace(client);
        // The same decisions as the library run; only the task (and so its ids) differs.
        expect(trace.events).toEqual(reference.events);
        ids.push(trace.taskId);
        await transport.terminateSession();
        await client.close();
      }
      expect(new Set([...ids, reference.taskId]).size).toBe(3);
    } finally {
      expect(await stopCli(child)).toBe(0);
    }
  });
});
