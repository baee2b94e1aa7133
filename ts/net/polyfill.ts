/**
 * libp2p 3 targets Node 22: it calls Promise.withResolvers and dials WebSockets with the global
 * WebSocket, neither of which Node 20 has. This project runs on Node 20, so both are supplied when
 * missing (WebSocket by the `ws` package). Import this module before libp2p.
 */
import { NodeWebSocket } from './websocket.js';

declare global {
  interface PromiseConstructor {
    withResolvers?: unknown;
  }
}

if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>(this: PromiseConstructor) {
      let resolve!: (v: T | PromiseLike<T>) => void;
      let reject!: (e: unknown) => void;
      const promise = new this<T>((a, b) => {
        resolve = a;
        reject = b;
      });
      return { promise, resolve, reject };
    },
  });
}

if (typeof globalThis.WebSocket !== 'function') {
  Object.defineProperty(globalThis, 'WebSocket', { configurable: true, writable: true, value: NodeWebSocket });
}

export {};
