/**
 * The Aira MCP server over stdio: the process is the session and the session is one task. It ends when
 * the client closes stdin (or on SIGINT/SIGTERM); an unfinished task is then cancelled.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createAiraMcpSession, type AiraMcpSession, type AiraMcpSessionOptions } from './server.js';

/** The longest one message may be on stdin before the transport drops it. */
export const STDIO_MAX_MESSAGE_BYTES = 1 << 20;

export interface StdioServed {
  readonly session: AiraMcpSession;
  /** Settles once the session has ended and the task is closed. */
  readonly ended: Promise<void>;
}

export async function serveAiraMcpStdio(opts: AiraMcpSessionOptions, io: { stdin?: NodeJS.ReadableStream & { pause(): unknown }; stdout?: NodeJS.WritableStream } = {}): Promise<StdioServed> {
  const stdin = io.stdin ?? process.stdin;
  const session = createAiraMcpSession(opts);
  const transport = new StdioServerTransport(stdin as typeof process.stdin, (io.stdout ?? process.stdout) as typeof process.stdout, { maxBufferSize: STDIO_MAX_MESSAGE_BYTES });
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
  await session.server.connect(transport);
  return { session, ended };
}
