// WebSockets with `ws` as libp2p uses them: a server socket survives bad frames, a reset (close 1006)
// drops the socket instead of throwing, and the client class libp2p dials with on Node 20 works.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { hardenWebSocketServer, NodeWebSocket, WS_MAX_PAYLOAD, type WsServerLike } from '../../ts/net/websocket.js';
import { SocketGuard } from '../../ts/net/guard.js';
import { createNode } from '../../ts/net/node.js';
import { portOf, seed, until, wsFrame, wsUpgraded } from './helpers.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/**
 * An HTTP server handing upgrades to a hardened ws server the way libp2p's listener does: the socket
 * comes from handleUpgrade's callback, and nothing else listens for its errors.
 */
async function server(onSocket: (ws: WebSocket) => void = () => undefined) {
  const wss = new WebSocketServer({ noServer: true });
  const accepted: WebSocket[] = [];
  hardenWebSocketServer(wss as unknown as WsServerLike);
  const web = http.createServer();
  web.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      accepted.push(ws);
      onSocket(ws);
    }),
  );
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => (web.closeAllConnections(), web.close(r))));
  return { wss, accepted, port: (web.address() as AddressInfo).port };
}

describe('hardened WebSockets', () => {
  it('a frame with reserved bits set, or a bad opcode, closes that socket and throws nowhere', async () => {
    const s = await server();
    expect((s.wss as unknown as WsServerLike).options.maxPayload).toBe(WS_MAX_PAYLOAD);
    for (const bad of [
      wsFrame({ opcode: 2, rsv: 3, payload: Uint8Array.of(1) }),
      wsFrame({ opcode: 2, rsv: 4 }),
      wsFrame({ opcode: 3 }),
      wsFrame({ opcode: 2, masked: false }),
    ]) {
      const c = await wsUpgraded(s.port, '127.0.0.1');
      expect(c.upgraded).toBe(true);
      c.socket.write(bad);
      await until(() => c.closed, 'the server to close the socket');
    }
    expect(s.accepted).toHaveLength(4);
  });

  it('close(1006), which libp2p uses to reset, drops the socket instead of throwing', async () => {
    const s = await server();
    const c = await wsUpgraded(s.port, '127.0.0.1');
    await until(() => s.accepted.length === 1, 'the server side');
    expect(() => s.accepted[0]!.close(1006)).not.toThrow();
    await until(() => c.closed, 'the socket to be dropped');
  });

  it('NodeWebSocket connects, exchanges a message and resets with 1006 like the server side', async () => {
    const s = await server((ws) => ws.on('message', (m: Buffer) => ws.send(m)));
    const ws = new NodeWebSocket(`ws://127.0.0.1:${s.port}`);
    ws.binaryType = 'arraybuffer';
    const got: unknown[] = [];
    ws.on('message', (m: unknown) => got.push(m));
    let closed = false;
    ws.on('close', () => (closed = true));
    await new Promise((r) => ws.once('open', r));
    (ws as unknown as { send(d: Uint8Array): void }).send(Uint8Array.of(1, 2, 3));
    await until(() => got.length === 1, 'the echo');
    expect(new Uint8Array(got[0] as ArrayBuffer)).toEqual(Uint8Array.of(1, 2, 3));
    expect(() => ws.close(1006)).not.toThrow();
    await until(() => closed, 'the client to close');
  });

  it("a listening libp2p node (the host's) survives bad frames on its WebSocket port", async () => {
    const node = await createNode(seed(91), { listen: ['/ip4/127.0.0.1/tcp/0/ws'], guard: new SocketGuard({ deadlineMs: 5_000 }) });
    closers.push(async () => node.stop());
    const port = portOf({ ticket: { addrs: node.getMultiaddrs().map(String) } } as never, 'ws');
    for (const bad of [wsFrame({ opcode: 2, rsv: 3, payload: Uint8Array.of(0x55) }), wsFrame({ opcode: 0xb }), Buffer.from('not a frame at all')]) {
      const c = await wsUpgraded(port, '127.0.0.2');
      expect(c.upgraded).toBe(true);
      c.socket.write(bad);
      await until(() => c.closed, 'the node to close the socket');
    }
    expect(node.status).toBe('started');
  });
});
