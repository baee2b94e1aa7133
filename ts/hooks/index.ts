/** Local protocol hooks: skeletons and their detection, loading. The hook types are ./types.ts (aigenora/hooks). */
export { HOOK_NAMES } from './types.js';
export {
  checkPristine,
  LEGACY_BANNERS,
  NOT_IMPLEMENTED,
  SIDECAR,
  sidecarFor,
  skeletonBypassFromEnv,
  skeletonSource,
  type PristineCheck,
  type Sidecar,
} from './skeleton.js';
export { HooksError, instantiateHooks, loadHooks, type HooksErrorCode, type LoadHooksOptions } from './load.js';
