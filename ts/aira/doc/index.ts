/** The built-in document authority (browser-safe: the memory store only; the database store is in ../node.ts). */
export { openDocumentAuthority, DOC_AUTHORITY, DOC_PROTOCOL_VERSION, type DocumentAuthorityOptions } from './authority.js';
export { DOC_CAPABILITIES, OPERATION_CATALOG, searchCatalog } from './catalog.js';
export { AiraDoc, bracketDoc, bracketTask, DOC_SCHEMA, LIMITS as DOC_LIMITS } from './model.js';
export { MemoryDocStore, refs as docRefs, type CandidateRecord, type DocStore, type RefUpdate, type RevisionOp, type RevisionRecord, type TokenRecord } from './store.js';
export { VALIDATORS, evaluate as evaluateValidator } from './validators.js';
