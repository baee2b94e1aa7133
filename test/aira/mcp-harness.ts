// Shared pieces of the MCP tests: the library reference run and a script driver over an MCP client.
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Crypto } from '../../ts/crypto/backend.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { openTaskSession, type TaskSessionOptions } from '../../ts/aira/mcp/open.js';
import { bracketScript, runScript, type ScriptStep } from '../../ts/aira/mcp/script.js';
import { CAPSULE_URI, createAiraMcpSession, TRACE_URI, type AiraMcpSession } from '../../ts/aira/mcp/server.js';
import { startTask, type AiraTask } from '../../ts/aira/runtime.js';
import { Envelope, Trace, type TaskStatus } from '../../ts/aira/schema.js';

import { BIN } from '../shared/cli.js';
export { BIN };

/**
 * The bracket task run through the library alone: the reference every transport must reproduce. It runs
 * on the pure-JS crypto backend while the CLI runs on WASM, so equal traces also mean equal ids.
 */
export async function libraryTrace(steps: readonly ScriptStep[] = bracketScript()): Promise<Trace> {
  const crypto = getCrypto('js');
  const authority = openDocumentAuthority({ crypto });
  const task = await startTask({ authority, crypto, task: bracketTask() });
  await runScript(
    steps,
    (op, input) => task.call({ op, input }),
    () => task.capsule(),
  );
  await authority.close();
  return task.trace();
}

export interface BracketSession {
  client: Client;
  session: AiraMcpSession;
  task: AiraTask;
  /** Whether the session released its document authority. */
  released(): boolean;
  /** How many tool-list changes the client was told of. */
  listChanged(): number;
}

/**
 * The bracket task's MCP session in process, on a document authority of its own (released when the session
 * ends), and a client named `clientName` connected to it over an in-memory transport.
 */
export async function bracketSession(
  crypto: Crypto,
  opts: Pick<TaskSessionOptions, 'bindCapabilities' | 'bindTtlMs' | 'now'> = {},
  clientName = 'aira-test',
): Promise<BracketSession> {
  let released = false;
  const opened = await openTaskSession({
    crypto,
    task: bracketTask(),
    authority: async () => {
      const authority = openDocumentAuthority({ crypto });
      return {
        authority,
        release: async () => {
          released = true;
          await authority.close();
        },
      };
    },
    ...opts,
  });
  const session = createAiraMcpSession(opened);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await session.server.connect(a);
  const client = new Client({ name: clientName, version: '1.0.0' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await client.connect(b);
  return { client, session, task: opened.task, released: () => released, listChanged: () => changes };
}

export interface ToolAnswer {
  envelope: Envelope;
  /** The summary: the first line of the text. */
  text: string;
  /** The whole first text block: the summary, problems, diagnostics and next calls. */
  guide: string;
  isError: boolean;
}

/**
 * One tool call. The structured content must be a valid envelope, and the content two text blocks: the
 * guide (its first line the summary) and the envelope serialized, equal to the structured content.
 */
export async function callTool(client: Client, name: string, args: unknown): Promise<ToolAnswer> {
  const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
  const envelope = Envelope.parse(r.structuredContent);
  const content = r.content as Array<{ type: string; text?: string }>;
  if (content.length !== 2 || content.some((c) => c.type !== 'text' || typeof c.text !== 'string'))
    throw new Error(`expected two text blocks, got ${JSON.stringify(content)}`);
  const serialized: unknown = JSON.parse(content[1]!.text!);
  if (JSON.stringify(serialized) !== JSON.stringify(r.structuredContent))
    throw new Error(`the JSON text differs from the structured content: ${content[1]!.text}`);
  const guide = content[0]!.text!;
  return { envelope, text: guide.split('\n')[0]!, guide, isError: r.isError === true };
}

export async function readJsonResource(client: Client, uri: string): Promise<unknown> {
  const r = await client.readResource({ uri });
  const first = r.contents[0] as { text?: string; mimeType?: string } | undefined;
  if (first?.mimeType !== 'application/json' || typeof first.text !== 'string') throw new Error(`resource ${uri} is not JSON text`);
  return JSON.parse(first.text) as unknown;
}

export async function mcpTrace(client: Client): Promise<Trace> {
  return Trace.parse(await readJsonResource(client, TRACE_URI));
}

/** The script driven through an MCP client: plan bindings come from the capsule resource. */
export async function runOverMcp(client: Client, steps: readonly ScriptStep[] = bracketScript()): Promise<ToolAnswer[]> {
  const answers: ToolAnswer[] = [];
  await runScript(
    steps,
    async (op, input) => {
      const a = await callTool(client, op, input);
      answers.push(a);
      return a.envelope;
    },
    () => readJsonResource(client, CAPSULE_URI),
  );
  return answers;
}

export const status = (e: Envelope): TaskStatus => e.task;

/** Starts `aigenora …` and resolves with the first stdout line matching `ready`. */
export function startCli(args: string[], ready: RegExp, timeoutMs = 180_000): Promise<{ child: ChildProcess; line: string; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line from aigenora ${args.join(' ')} within ${timeoutMs} ms; stderr: ${err}`));
    }, timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => ready.test(l));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve({ child, line, stderr: () => err });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`aigenora ${args.join(' ')} exited ${code} before it was ready: ${err}`));
    });
  });
}

export function stopCli(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}
