/**
 * WebSockets for libp2p on Node.js, with the `ws` package. The listener side hands every upgraded
 * socket to libp2p without an 'error' listener, so one bad frame (reserved bits set, a bad opcode, an
 * unmasked frame…) was an uncaught exception; and libp2p resets a connection with close(1006), a code
 * no endpoint may send, which throws and leaves the socket open. Both are handled here, for sockets
 * the host accepts and for those a guest dials (Node 20 has no global WebSocket; libp2p dials with it).
 */
import { WebSocket } from 'ws';

/** A message larger than any libp2p frame over WebSockets (Noise frames are at most 64 KiB). */
export const WS_MAX_PAYLOAD = 1 << 20;

interface Closable {
  on(event: 'error', listener: (err: Error) => void): unknown;
  close(code?: number, reason?: string | Buffer): void;
  terminate(): void;
}

const ABNORMAL = 1006;

/** An error ends in 'close', which libp2p handles; a reset drops the socket. */
function harden(ws: Closable): void {
  ws.on('error', () => undefined);
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer) => (code === ABNORMAL ? ws.terminate() : close(code, reason));
}

/** The WebSocket libp2p dials with on Node.js. */
export class NodeWebSocket extends WebSocket {
  constructor(address: string | URL, protocols?: string | string[]) {
    super(address, protocols, { maxPayload: WS_MAX_PAYLOAD });
    harden(this);
  }
}

type Upgrade<R, S, H> = (req: R, socket: S, head: H, done: (ws: Closable, req: R) => void) => void;

/** The slice of ws's WebSocketServer that libp2p's listener creates and this module adjusts. */
export interface WsServerLike<R = unknown, S = unknown, H = unknown> {
  options: { maxPayload?: number };
  handleUpgrade: Upgrade<R, S, H>;
}

/**
 * libp2p's listener takes each upgraded socket from handleUpgrade's callback (ws emits no
 * 'connection' event in that mode), so the socket is hardened there, before libp2p sees it.
 */
export function hardenWebSocketServer<R, S, H>(server: WsServerLike<R, S, H>): void {
  server.options.maxPayload = WS_MAX_PAYLOAD;
  const upgrade = server.handleUpgrade.bind(server);
  server.handleUpgrade = (req, socket, head, done) =>
    upgrade(req, socket, head, (ws, r) => {
      harden(ws);
      done(ws, r);
    });
}
