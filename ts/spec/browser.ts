/** Protocol contracts for browsers and bundlers: everything in index.ts except reading files. */
export * from './types.js';
export * from './errors.js';
export { validateSpec, validateOptions, actionsOf, SUPPORTED_SPEC_VERSIONS, type ValidateOptions } from './validate.js';
export {
  protocolId,
  contractText,
  contractOf,
  pythonJson,
  pythonFloatRepr,
  PROTOCOL_ID_JSON,
  type PythonJsonFault,
  type PythonJsonPolicy,
} from './protocol-id.js';
export {
  MessageValidator,
  messageValidator,
  messageJsonSchema,
  exactBounds,
  WireFloat,
  MAX_INTEGER_DIGITS,
  MESSAGE_ERROR_CODES,
  type MessageCheck,
  type MessageError,
  type MessageErrorCode,
  type ValidatorOptions,
  type FieldBounds,
} from './messages.js';
export { checkSpecText, SpecLoadError, MAX_SPEC_BYTES, type LoadedSpec } from './check.js';
