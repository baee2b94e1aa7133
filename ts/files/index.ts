/** Bounded, strict reads and atomic writes for everything that touches the disk. */
export { FileError, readBytes, readEvidence, readText, type FileErrorCode, type ReadOptions } from './read.js';
export { checkSecretFile, createFileAtomic, writeFileAtomic } from './write.js';
