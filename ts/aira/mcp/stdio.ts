/**
 * The Aira MCP server over stdio: the process is the session and the session is one task. It ends when
 * the client closes stdin (or on SIGINT/SIGTERM); an unfinished task is then cancelled.
 *
 * The transport is ours rather than the SDK's StdioServerTransport, which answers nothing to a line
 * that is not a JSON-RPC message (the client waits forever) and ends the whole session on one line over
 * its size cap. Here every line gets an answer or is delivered: not JSON (or not UTF-8) is the JSON-RPC
 * -32700 parse error, JSON that is no JSON-RPC message is -32600, a line over the cap is dropped with a
 * -32600, and the session goes on.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createAiraMcpSession, type AiraMcpSession, type AiraMcpSessionOptions } from './server.js';

/** The longest one message may be on stdin; a longer line is dropped (and answered) unread. */
export const STDIO_MAX_MESSAGE_BYTES = 1 << 20;

export interface StdioServed {
  readonly session: AiraMcpSession;
  /** Settles once the session has ended and the task is closed. */
  readonly ended: Promise<void>;
}

type Stdin = NodeJS.ReadableStream & { pause(): unknown };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON-RPC over newline-delimited lines, one message a line. */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  #parts: Buffer[] = [];
  #size = 0;
  /** The current line passed the cap: the rest of it is dropped. */
  #overlong = false;
  #closed = false;
  readonly #onData = (chunk: Buffer | string): void => this.#take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  readonly #onError = (error: Error): void => this.onerror?.(error);

  constructor(
    private readonly stdin: Stdin,
    private readonly stdout: NodeJS.WritableStream,
    private readonly maxLineBytes = STDIO_MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.#onData);
    this.stdin.on('error', this.#onError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.#write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.stdin.off('data', this.#onData);
    this.stdin.off('error', this.#onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.#parts = [];
    this.onclose?.();
  }

  #write(line: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(line)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  /** Answers what cannot be delivered; `id` is null when the line gave none (JSON-RPC 2.0 §5). */
  #refuse(id: string | number | null, code: number, message: string): void {
    void this.#write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`).catch(() => undefined);
  }

  #take(chunk: Buffer): void {
    let rest = chunk;
    for (let nl = rest.indexOf(0x0a); nl >= 0 && !this.#closed; nl = rest.indexOf(0x0a)) {
      this.#hold(rest.subarray(0, nl));
      const line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts);
      const overlong = this.#overlong;
      this.#parts = [];
      this.#size = 0;
      this.#overlong = false;
      rest = rest.subarray(nl + 1);
      if (overlong) this.#refuse(null, -32600, `Invalid Request: a message is at most ${this.maxLineBytes} bytes; the line was dropped`);
      else this.#line(line);
    }
    this.#hold(rest);
  }

  #hold(part: Buffer): void {
    if (this.#overlong || part.length === 0) return;
    if (this.#size + part.length > this.maxLineBytes) {
      this.#overlong = true;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    this.#parts.push(part);
    this.#size += part.length;
  }

  #line(bytes: Buffer): void {
    let text: string;
    try {
      text = utf8.decode(bytes).replace(/\r$/, '');
    } catch {
      return this.#refuse(null, -32700, 'Parse error: the line is not UTF-8');
    }
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.#refuse(null, -32700, 'Parse error: the line is not JSON');
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (!message.success) {
      const id =
        typeof value === 'object' && value !== null && 'id' in value && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
      return this.#refuse(id, -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
    }
    this.onmessage?.(message.data);
  }
}

export async function serveAiraMcpStdio(opts: AiraMcpSessionOptions, io: { stdin?: Stdin; stdout?: NodeJS.WritableStream } = {}): Promise<StdioServed> {
  const stdin = io.stdin ?? process.stdin;
  const session = createAiraMcpSession(opts);
  const transport = new StdioLineTransport(stdin, io.stdout ?? process.stdout);
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  let closing = false;
  const end = () => {
    if (closing) return;
    closing = true;
    void session.close().finally(finish);
  };
  stdin.once('end', end);
  stdin.once('close', end);
  session.server.onclose = (() => {
    const cancel = session.server.onclose;
    return () => {
      cancel?.();
      end();
    };
  })();
  await session.connect(transport);
  return { session, ended };
}
