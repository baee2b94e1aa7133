/** Protocol contracts for browsers and bundlers: everything in index.ts except reading files. */
export {
  DIRECTIONS,
  FIELD_TYPES,
  FLOW_MODES,
  flowMode,
  type Decision,
  type Direction,
  type ExchangeStep,
  type FieldSchema,
  type FieldType,
  type Flow,
  type FlowMode,
  type MessageSpec,
  type ParameterSpec,
  type Phase,
  type Spec,
  type TableColumn,
  type Timing,
  type WireDirection,
} from './types.js';
export type { Severity, SpecIssue } from './errors.js';
export { validateSpec, validateOptions, SUPPORTED_SPEC_VERSIONS, type ValidateOptions } from './validate.js';
export { protocolId, contractText, pythonFloatRepr } from './protocol-id.js';
export {
  MessageValidator,
  messageValidator,
  messageJsonSchema,
  exactBounds,
  WireFloat,
  MESSAGE_ERROR_CODES,
  type MessageCheck,
  type MessageError,
  type MessageErrorCode,
  type ValidatorOptions,
  type FieldBounds,
} from './messages.js';
export { checkSpecText, SpecLoadError, MAX_SPEC_BYTES, type LoadedSpec } from './check.js';
