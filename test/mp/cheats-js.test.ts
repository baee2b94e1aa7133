// The cheat suite (cheats.ts) on the js backend, as a differential: every case is played on both
// backends over the pinned deal, the js run must equal the wasm run (every message, both verdicts,
// every event, both transcript roots) and pass the case's own checks. cheats-wasm.test.ts runs the
// suite on wasm; a file each lets vitest run the two at once.
import { backendsAgree } from './cheats.js';

backendsAgree();
