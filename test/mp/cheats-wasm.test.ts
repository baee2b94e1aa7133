// The cheat suite (cheats.ts) on the wasm backend, every case with all its checks. The js backend is
// held to the same games in cheats-js.test.ts; a file each lets vitest run the two at once.
import { cheatSuite } from './cheats.js';

cheatSuite('wasm');
