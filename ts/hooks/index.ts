/** Local protocol hooks: types per flow mode, skeletons, loading. */
export * from './types.js';
export * from './skeleton.js';
export * from './load.js';
