/** The rin authority (fetch only); the local policy engine is Node-only: `./local-policy.js`. */
export {
  capabilityIdOf as rinCapabilityId,
  effectClassOf as rinEffectClass,
  openRinAuthority,
  RIN_OPERATION_CATALOG,
  RIN_PROTOCOL_VERSION,
  type RinAuthorityOptions,
} from './authority.js';
export { HARBOR_EFFECTS, harborLoadTask } from './harbor.js';
export type { DeclaredEffect, EffectProfile, PolicyQuestion, PolicyVerdict, RinPolicy } from './types.js';
export { evaluateAssertion as evaluateRinAssertion, RIN_VALIDATORS } from './verify.js';
