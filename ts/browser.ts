/** The library in one import, for browsers and bundlers: the same as index.ts without file access. */
export * from './crypto/browser.js';
export * from './spec/browser.js';
export * from './trade/browser.js';
export * from './hooks/types.js';
