// `aigenora aira mcp --authority rin`: the meta-operations over MCP on a boat of the harbor, through our
// control daemon with the world attached by `aigenora rin host`, as a user would start them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { harborLoadTask } from '../../ts/aira/rin/index.js';
import { freePort, PRINCIPAL, RIN_TOKEN, SCOPES, startDaemon, type Daemon } from '../interop/rin-harness.js';
import { tempDir } from '../shared/tmp.js';
import { BIN, callTool, mcpTrace } from './mcp-harness.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

describe('aigenora aira mcp --authority rin', () => {
  let daemon: Daemon;
  let host: Daemon;
  let client: Client;
  beforeAll(async () => {
    const dir = tempDir('aira-mcp-rin');
    const port = await freePort();
    daemon = await startDaemon(
      'aigenora rin serve',
      process.execPath,
      [
        BIN,
        'rin',
        'serve',
        '--principal',
        PRINCIPAL,
        '--scopes',
        SCOPES.join(','),
        '--policy',
        'harbor',
        '--listen',
        `127.0.0.1:${port}`,
        '--data-dir',
        dir,
        '--json',
      ],
      { RIN_CONTROL_TOKEN: RIN_TOKEN },
      port,
      /"url":/,
      60_000,
    );
    host = await startDaemon(
      'aigenora rin host',
      process.execPath,
      [BIN, 'rin', 'host', 'harbor', '--owner', PRINCIPAL, '--control', daemon.url, '--tick-ms', '200', '--json'],
      { RIN_CONTROL_TOKEN: RIN_TOKEN },
      0,
      /"host_id":/,
      60_000,
    );
    const task = join(dir, 'task.json');
    writeFileSync(task, JSON.stringify({ intentFrame: harborLoadTask() }));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    env['RIN_CONTROL_TOKEN'] = RIN_TOKEN;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'aira', 'mcp', '--authority', 'rin', '--control', daemon.url, '--world', 'harbor', '--actor', 'gull', '--task', task],
      env,
      stderr: 'pipe',
    });
    client = new Client({ name: 'aira-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 180_000 });
  });
  afterAll(async () => {
    await client?.close();
    await host?.stop();
    await daemon?.stop();
  });

  it('discovers the actor capabilities as data behind the same nine tools', async () => {
    expect((await client.listTools()).tools).toHaveLength(9);
    const manifest = await callTool(client, 'interface.manifest', { requestId: 'm' });
    expect(manifest.envelope.status).toBe('success');
    expect(manifest.envelope.data['operationCatalog']).toBe('aira.rin.ops/1');
    const search = await callTool(client, 'catalog.search', { requestId: 's', query: 'cargo' });
    expect(search.envelope.status).toBe('success');
    const hits = (search.envelope.data['hits'] as Array<{ id: string }>).map((h) => h.id);
    expect(hits.some((id) => id.startsWith('cap:harbor.load-cargo@'))).toBe(true);
    const describeIt = await callTool(client, 'catalog.describe', { requestId: 'd', capability: hits.find((id) => id.startsWith('cap:harbor.load-cargo@'))! });
    expect(describeIt.envelope.status).toBe('success');
    expect(describeIt.envelope.task.state).toBe('describe');
    const trace = await mcpTrace(client);
    expect(trace.events.map((e) => [e.op, e.decision, e.toState])).toEqual([
      ['interface.manifest', 'scheduled', 'observe'],
      ['catalog.search', 'scheduled', 'discover'],
      ['catalog.describe', 'scheduled', 'describe'],
    ]);
  });
});
