/** The library in one import, for browsers and bundlers: the same as index.ts without file access. */
// Each line is an entry point that names its own exports (README, "Public API"): this module is
// exactly their union, so a name is added or dropped there, once.
export * from './crypto/browser.js';
export * from './spec/browser.js';
export * from './trade/browser.js';
export * from './hooks/types.js';
