// A client that forwards only a tool result's text `content` to its model, as many MCP clients do (issue
// 34 item 5): a deterministic script standing in for the model reads the server's instructions and the
// text of each result, never `structuredContent` and no resource, and completes the built-in bracket task.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it, vi } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { BIN, bracketSession } from './mcp-harness.js';

// The stdio case starts the CLI as a process (tsx compiles it on start): slow on a loaded machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

const crypto = getCrypto();

/** What the model sees of one call: the text blocks of `content`, nothing else. */
interface Seen {
  /** The first block: the summary, problems, diagnostics and `next:` lines. */
  guide: string;
  /** The second block parsed: the result as JSON. */
  result: Result;
}

/** The members of a result the script reads (from the text, never from structuredContent). */
interface Result {
  observedRevision: string;
  status: string;
  data: Record<string, unknown>;
  nextActions: Array<{ op: string }>;
  task: { state: string; terminal: string | null };
}

/** A client as a content-only host drives it: a call answers only its text content. */
function contentOnly(client: Client): (name: string, args: Record<string, unknown>) => Promise<Seen> {
  return async (name, args) => {
    const { content } = await client.callTool({ name, arguments: args });
    const texts = (content as Array<{ type: string; text?: string }>).filter((c) => c.type === 'text').map((c) => c.text ?? '');
    expect(texts).toHaveLength(2);
    return { guide: texts[0]!, result: JSON.parse(texts[1]!) as Result };
  };
}

/** The `next:` line for `op` in a result's text, its arguments parsed. */
function nextHint(seen: Seen, op: string): Record<string, unknown> | undefined {
  const line = seen.guide.split('\n').find((l) => l.startsWith(`next: ${op} {`));
  return line === undefined ? undefined : (JSON.parse(line.slice(`next: ${op} `.length)) as Record<string, unknown>);
}

/** Any `<…>` placeholder left in a value the script is about to send. */
const placeholders = (v: unknown): string[] => JSON.stringify(v).match(/"<[^"]*>"/g) ?? [];

/**
 * The stand-in model. From the instructions: the task, the acceptance assertion (its validator's
 * arguments say which parameter to set to what), the order of the calls and the plan template with its
 * bindings. From each result's text: hits, catalog hash, the described contract, candidate id, token,
 * the revision and the next operation. Its one judgement, as a model's would be, is which capability fits:
 * a task that asks a parameter to equal a value needs the capability that sets a parameter.
 */
async function completeFromText(
  instructions: string,
  call: (name: string, args: Record<string, unknown>) => Promise<Seen>,
): Promise<{ ops: string[]; last: Seen; seen: Seen[] }> {
  const assertion = /^- ([\w.:-]+): .* \(validator param\.equals (\{.*\})\)$/m.exec(instructions);
  expect(assertion, 'the instructions name the acceptance assertion and its arguments').not.toBeNull();
  const target = JSON.parse(assertion![2]!) as { name: string; value: unknown };
  const order = [...instructions.matchAll(/^\d+\. ([\w.]+) /gm)].map((m) => m[1]!);
  const template = /^PLAN = (\{.*\})$/m.exec(instructions);
  expect(template, 'the instructions give the plan template').not.toBeNull();
  const plan = JSON.parse(template![1]!) as { bindings: Record<string, string>; acceptanceAssertions: string[] } & Record<string, unknown>;
  // Every binding the model cannot learn from a call is given up front: the operation catalog too.
  expect(placeholders(plan.bindings)).toEqual(['"<data.catalogHash of catalog.search>"']);
  expect(plan.acceptanceAssertions).toEqual([assertion![1]]);

  const ops: string[] = [];
  const seen: Seen[] = [];
  let last: Seen | undefined;
  let catalogHash = '';
  let hits: Array<{ id: string; title?: string }> = [];
  let described: { id: string; mode: string; risk: string; inputSchema: { required?: string[] } } | undefined;
  let candidateId = '';
  let validationToken = '';
  for (let i = 1; i <= 20; i++) {
    const op = last === undefined ? order[0]! : last.result.nextActions[0]?.op;
    expect(op, `a next operation after ${last?.guide ?? 'the instructions'}`).toBeDefined();
    const args: Record<string, unknown> = { requestId: `call-${i}` };
    switch (op) {
      case 'catalog.search':
        args['query'] = 'set parameter';
        break;
      case 'catalog.describe': {
        const hit = hits.find((h) => /^set /i.test(h.title ?? ''));
        expect(hit, JSON.stringify(hits)).toBeDefined();
        args['capability'] = hit!.id;
        break;
      }
      case 'model.proposePatch':
        expect(described!.inputSchema.required).toEqual(Object.keys(target));
        args['plan'] = {
          ...plan,
          baseRevision: last!.result.observedRevision,
          bindings: { ...plan.bindings, discoveryCatalogHash: catalogHash },
          steps: [{ id: 'set-width', capability: described!.id, mode: described!.mode, args: target }],
          estimatedEffects: [described!.id],
          estimatedRisk: described!.risk,
        };
        break;
      case 'model.preview':
      case 'model.validate':
        args['candidateId'] = candidateId;
        break;
      case 'model.commit':
        args['candidateId'] = candidateId;
        args['validationToken'] = validationToken;
        break;
      case 'model.read':
        break;
      default:
        throw new Error(`the script has no move for ${op}`);
    }
    expect(placeholders(args), `${op} is sent whole`).toEqual([]);
    // What the script worked out agrees with the call the previous result's text proposed.
    const hint = last === undefined ? undefined : nextHint(last, op!);
    if (hint !== undefined) {
      for (const [k, v] of Object.entries(hint)) {
        if (k === 'plan') {
          const p = v as { baseRevision: string; intentFrameHash: string; bindings: unknown; acceptanceAssertions: unknown };
          expect({
            baseRevision: p.baseRevision,
            intentFrameHash: p.intentFrameHash,
            bindings: p.bindings,
            acceptanceAssertions: p.acceptanceAssertions,
          }).toEqual({
            baseRevision: (args['plan'] as Record<string, unknown>)['baseRevision'],
            intentFrameHash: plan['intentFrameHash'],
            bindings: (args['plan'] as Record<string, unknown>)['bindings'],
            acceptanceAssertions: plan.acceptanceAssertions,
          });
        } else if (placeholders(v).length === 0) {
          expect(args[k], `${op}.${k} as its hint says`).toEqual(v);
        }
      }
    }
    ops.push(op!);
    last = await call(op!, args);
    seen.push(last);
    expect(last.result.status, last.guide).toBe('success');
    const data = last.result.data;
    if (op === 'catalog.search') {
      catalogHash = data['catalogHash'] as string;
      hits = data['hits'] as typeof hits;
    }
    if (op === 'catalog.describe') described = data as unknown as typeof described;
    if (op === 'model.proposePatch') candidateId = data['candidateId'] as string;
    if (op === 'model.validate') validationToken = data['validationToken'] as string;
    if (last.result.task.terminal !== null) break;
  }
  return { ops, last: last!, seen };
}

async function checkRun(client: Client): Promise<void> {
  const instructions = client.getInstructions();
  expect(instructions).toBeDefined();
  const { ops, last, seen } = await completeFromText(instructions!, contentOnly(client));
  expect(last.result.task.terminal).toBe('completed');
  expect(last.guide.split('\n')[0]).toMatch(/^model\.read success .*task completed\)$/);
  expect(last.guide).toContain('done: the task ended completed');
  // Straight through the protocol's sequence: no interface.manifest first, no refusal on the way.
  expect(ops).toEqual(['catalog.search', 'catalog.describe', 'model.proposePatch', 'model.preview', 'model.validate', 'model.commit', 'model.read']);
  // The ids and tokens were in the text: the next-call lines carried them filled in.
  expect(nextHint(seen[4]!, 'model.commit')).toMatchObject({
    candidateId: expect.stringMatching(/^cand:sha256:/),
    validationToken: expect.stringMatching(/^vtok:sha256:/),
  });
}

describe('a client that forwards only text content', () => {
  it('completes the bracket task from the instructions and the result texts (in process)', async () => {
    const { client, session, task, released } = await bracketSession(crypto, {}, 'content-only');
    await checkRun(client);
    // The runtime, not the script, says it is done: the task itself ended completed.
    expect(task.terminal).toMatchObject({ state: 'completed', code: 'COMPLETED' });
    expect(task.trace().events.map((e) => e.decision)).toEqual(Array(7).fill('scheduled'));
    await client.close();
    await session.close();
    expect(released()).toBe(true);
  });

  it('completes it against `aigenora aira mcp` over stdio', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'aira', 'mcp'], stderr: 'pipe' });
    const client = new Client({ name: 'content-only', version: '1.0.0' });
    await client.connect(transport, { timeout: 180_000 });
    try {
      await checkRun(client);
    } finally {
      await client.close();
    }
  });
});
