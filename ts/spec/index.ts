/** Protocol contracts: spec.json types, validation, protocol_id, message validation, loading. */
export * from './types.js';
export * from './errors.js';
export { validateSpec, validateOptions, actionsOf, SUPPORTED_SPEC_VERSIONS, type ValidateOptions } from './validate.js';
export { protocolId, contractText, contractOf, pythonJson, pythonFloatRepr } from './protocol-id.js';
export { MessageValidator, messageValidator, messageJsonSchema, MESSAGE_ERROR_CODES, type MessageCheck, type MessageError, type MessageErrorCode } from './messages.js';
export { loadSpec, checkSpecText, specPath, SpecLoadError, MAX_SPEC_BYTES, type LoadedSpec } from './load.js';
