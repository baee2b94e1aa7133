// One MCP session over one task, in process: schema refusals reach the runtime, a closed session cancels
// the task, and scoped bound tools go stale instead of following the latest revision.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketScript } from '../../ts/aira/mcp/script.js';
import { bracketSession, callTool, mcpTrace, runOverMcp } from './mcp-harness.js';

const crypto = getCrypto();

const session = (opts: Parameters<typeof bracketSession>[1] = {}) => bracketSession(crypto, opts);

describe('a session', () => {
  it('sends input the schema refuses to the runtime, which answers INVALID_INPUT and records it', async () => {
    const { client, task } = await session();
    const r = await callTool(client, 'catalog.search', { requestId: 'bad-1', limit: 0, frobnicate: true });
    expect(r.isError).toBe(true);
    expect(r.envelope.status).toBe('blocked');
    expect(r.envelope.diagnostics[0]).toMatchObject({ code: 'INVALID_INPUT', phase: 'input' });
    expect(r.envelope.task.state).toBe('observe');
    const trace = await mcpTrace(client);
    expect(trace.events).toHaveLength(1);
    expect(trace.events[0]).toMatchObject({ op: 'catalog.search', decision: 'rejected', code: 'INVALID_INPUT' });
    expect(trace).toEqual(task.trace());
    // A missing arguments object is refused the same way, not by the transport.
    const none = await client.callTool({ name: 'interface.manifest' });
    expect((none.structuredContent as { diagnostics: Array<{ code: string }> }).diagnostics[0]?.code).toBe('INVALID_INPUT');
    await client.close();
  });

  it('answers an unknown tool or resource with an MCP error, not a task event', async () => {
    const { client, task } = await session();
    await expect(client.callTool({ name: 'model.frobnicate', arguments: { requestId: 'x' } })).rejects.toThrow(/Tool model\.frobnicate not found/);
    await expect(client.readResource({ uri: 'aira://task/secrets' })).rejects.toThrow(/not found/);
    expect(task.trace().events).toEqual([]);
    await client.close();
  });

  it('cancels an unfinished task when the session closes, and releases its authority once', async () => {
    const { client, task, released } = await session();
    await callTool(client, 'catalog.search', { requestId: 'q' });
    expect(task.terminal).toBeNull();
    await client.close();
    await new Promise((r) => setTimeout(r, 10));
    expect(task.terminal).toMatchObject({ state: 'cancelled', code: 'CANCELLED', reason: 'the MCP session closed' });
    expect(released()).toBe(true);
    expect(task.trace().terminal?.state).toBe('cancelled');
  });

  it('leaves a completed task completed when the session closes', async () => {
    const { client, task, session: s } = await session();
    await runOverMcp(client);
    expect(task.terminal?.state).toBe('completed');
    await s.close();
    expect(task.terminal?.state).toBe('completed');
  });
});

describe('scoped bound tools', () => {
  const widen = (requestId: string) => ({ requestId, args: { name: 'width', value: 45 } });

  it('appear after describe, propose through model.proposePatch, and go stale when the TTL passes', async () => {
    let clock = 1_000;
    const { client, task, listChanged } = await session({ bindCapabilities: 2, bindTtlMs: 5_000, now: () => clock });
    expect((await client.listTools()).tools).toHaveLength(9);
    await runOverMcp(client, bracketScript().slice(0, 3));
    await new Promise((r) => setTimeout(r, 10));
    expect(listChanged()).toBe(1);
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).toContain('bound.doc.setParameter');
    const bound = tools.find((t) => t.name === 'bound.doc.setParameter')!;
    expect(bound.inputSchema.required).toEqual(['requestId', 'args']);
    const ok = await callTool(client, 'bound.doc.setParameter', widen('bound-1'));
    expect(ok.envelope.status).toBe('success');
    expect(ok.envelope.data['candidateId']).toMatch(/^cand:sha256:/);
    expect(task.state).toBe('propose');
    // The bound call is a model.proposePatch in the trace: no operation the meta-tools lack.
    expect(task.trace().events.at(-1)).toMatchObject({ op: 'model.proposePatch', requestId: 'bound-1', decision: 'scheduled' });
    clock += 5_000;
    const stale = await callTool(client, 'bound.doc.setParameter', widen('bound-2'));
    expect(stale.envelope.status).toBe('blocked');
    expect(stale.envelope.diagnostics[0]).toMatchObject({ code: 'BOUND_CAPABILITY_STALE', phase: 'binding', cause: 'stale' });
    expect(stale.envelope.nextActions).toEqual([{ op: 'catalog.describe', capability: 'cap:doc.setParameter@1', preconditions: [] }]);
    expect(stale.envelope.task.state).toBe('propose');
    expect(stale.envelope.data).toEqual({ completedPrefix: ['catalog.search', 'catalog.describe', 'model.proposePatch'], nextOperation: 'catalog.describe' });
    // The runtime recorded the refusal (served as the trace resource) and dispatched nothing.
    const trace = await mcpTrace(client);
    expect(trace).toEqual(task.trace());
    expect(trace.events.slice(-2)).toMatchObject([
      { op: 'model.proposePatch', requestId: 'bound-1', decision: 'scheduled' },
      {
        op: 'model.proposePatch',
        requestId: 'bound-2',
        decision: 'rejected',
        code: 'BOUND_CAPABILITY_STALE',
        status: 'blocked',
        fromState: 'propose',
        toState: 'propose',
      },
    ]);
    expect(stale.envelope.budgets).toEqual(ok.envelope.budgets);
    // Its request id is spent, as any refused call's is.
    const again = await callTool(client, 'bound.doc.setParameter', widen('bound-2'));
    expect(again.envelope.diagnostics[0]?.code).toBe('DUPLICATE_REQUEST_ID');
    await client.close();
  });

  it('go stale once the branch head moves, never switching to the latest revision', async () => {
    const { client, task } = await session({ bindCapabilities: 1, now: () => 0 });
    await runOverMcp(client, bracketScript().slice(0, 7));
    expect(task.state).toBe('commit');
    const stale = await callTool(client, 'bound.doc.setParameter', widen('after-commit'));
    expect(stale.envelope.diagnostics[0]?.code).toBe('BOUND_CAPABILITY_STALE');
    expect(stale.envelope.diagnostics[0]?.message).toMatch(/revision moved/);
    expect((await mcpTrace(client)).events.at(-1)).toMatchObject({
      requestId: 'after-commit',
      decision: 'rejected',
      code: 'BOUND_CAPABILITY_STALE',
      fromState: 'commit',
      toState: 'commit',
    });
    expect(task.state).toBe('commit');
    await client.close();
  });

  it('are refused by the runtime input check when malformed, and capped in number', async () => {
    const { client, task } = await session({ bindCapabilities: 1, now: () => 0 });
    await runOverMcp(client, bracketScript().slice(0, 3));
    await callTool(client, 'catalog.describe', { requestId: 'd2', capability: 'cap:doc.addParameter@1' });
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('bound.'));
    expect(names).toEqual(['bound.doc.setParameter']);
    const bad = await callTool(client, 'bound.doc.setParameter', { requestId: 'b', args: 'width=45' });
    expect(bad.envelope.diagnostics[0]?.code).toBe('INVALID_INPUT');
    expect(task.trace().events.at(-1)).toMatchObject({ op: 'model.proposePatch', decision: 'rejected', code: 'INVALID_INPUT' });
    await client.close();
  });
});
