/**
 * libp2p 3 calls Promise.withResolvers (Node 22+); this project runs on Node 20, so the standard
 * method is supplied when missing. Import this module before libp2p.
 */
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

export {};
