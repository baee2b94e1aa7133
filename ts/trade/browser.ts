/** agent-trade/0.2 for browsers and bundlers: everything in index.ts except reading a catalog directory. */
export {
  addSignature,
  bodyHash,
  createEnvelope,
  isObjectType,
  nowRfc3339,
  OBJECT_TYPES,
  objectId,
  PROTOCOL,
  signingInput,
  type Envelope,
  type EnvelopeSignature,
  type ObjectType,
} from './envelope.js';
export {
  DEFAULT_MAX_BYTES,
  parseUntrusted,
  VERIFY_RESULTS,
  verifyEnvelope,
  type KeyMap,
  type Parsed,
  type Verdict,
  type VerifyOptions,
  type VerifyResult,
} from './verify.js';
export { applyEvent, foldEvents, TRADE_STATES, type EventType, type Fold, type Step, type Trade, type TradeState } from './state.js';
export { DECIMAL, decimalAmount, uuidv7 } from './ids.js';
export { buildManifest, catalogHash, type Manifest } from './manifest.js';
export { SCHEMAS } from './schema.js';
