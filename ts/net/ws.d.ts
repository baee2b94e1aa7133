// The slice of the `ws` package (which ships no types) that ts/net and its tests use.
declare module 'ws' {
  import { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  export interface ClientOptions {
    maxPayload?: number;
    handshakeTimeout?: number;
  }

  export class WebSocket extends EventEmitter {
    constructor(address: string | URL, protocols?: string | string[], options?: ClientOptions);
    binaryType: string;
    send(data: Uint8Array | ArrayBuffer | string): void;
    close(code?: number, reason?: string | Buffer): void;
    terminate(): void;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: { noServer?: boolean; maxPayload?: number });
    options: { maxPayload?: number };
    handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, done: (ws: WebSocket) => void): void;
  }

  export default WebSocket;
}
