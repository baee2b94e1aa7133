/**
 * The library in one import (Node). Each part is also its own entry, which bundles less:
 * aigenora/crypto, aigenora/spec, aigenora/trade, aigenora/hooks.
 */
export * from './crypto/index.js';
export * from './spec/index.js';
export * from './trade/index.js';
export * from './hooks/types.js';
