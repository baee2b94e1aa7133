// The cheat suite (cheats.ts) on the js backend; a file per backend lets vitest run the two at once.
import { cheatSuite } from './cheats.js';

cheatSuite('js');
