/** The built-in document authority (browser-safe: the memory store only; the database store is in ../node.ts). */
export { openDocumentAuthority, DOC_AUTHORITY, DOC_PROTOCOL_VERSION, type DocumentAuthorityOptions } from './authority.js';
export { DOC_CAPABILITIES, OPERATION_CATALOG as DOC_OPERATION_CATALOG, searchCatalog as searchDocCatalog } from './catalog.js';
export { AiraDoc, bracketDoc, bracketTask, DOC_SCHEMA, LIMITS as DOC_LIMITS } from './model.js';
export {
  MemoryDocStore,
  refs as docRefs,
  type CandidateRecord,
  type DocStore,
  type Evidence as DocEvidence,
  type RefUpdate,
  type RevisionOp,
  type RevisionRecord,
  type TokenRecord,
} from './store.js';
export { VALIDATORS as DOC_VALIDATORS, evaluate as evaluateDocValidator } from './validators.js';
