/** Bounded, strict reads and atomic writes for everything that touches the disk. */
export * from './read.js';
export * from './write.js';
