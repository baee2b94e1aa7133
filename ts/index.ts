/**
 * The library in one import (Node). Each part is also its own entry, which bundles less:
 * aigenora/crypto, aigenora/spec, aigenora/trade, aigenora/hooks.
 */
// Each line is an entry point that names its own exports (README, "Public API"): this module is
// exactly their union, so a name is added or dropped there, once.
export * from './crypto/index.js';
export * from './spec/index.js';
export * from './trade/index.js';
export * from './hooks/types.js';
