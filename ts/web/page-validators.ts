/**
 * The agent page's precompiled validators (bundled in place of ts/spec/precompiled/index.ts by
 * scripts/build-web.mjs): those of the built-ins it plays (PAGE_HOOKS) and no others.
 */
import { precompiledTable, type PrecompiledModule } from '../spec/message-schema.js';
import * as coinFlip from '../spec/precompiled/coin-flip.js';
import * as connectFour from '../spec/precompiled/connect-four.js';
import * as gomoku from '../spec/precompiled/gomoku.js';
import * as guessNumber from '../spec/precompiled/guess-number.js';
import * as humanChat from '../spec/precompiled/human-chat.js';
import * as qna from '../spec/precompiled/qna.js';
import * as reversi from '../spec/precompiled/reversi.js';
import * as rps from '../spec/precompiled/rps.js';

/** By built-in folder, as PAGE_HOOKS names them (test/web/page-bundle.test.ts checks the two agree). */
export const PAGE_VALIDATORS: Record<string, PrecompiledModule> = {
  rps,
  'coin-flip': coinFlip,
  'guess-number': guessNumber,
  'connect-four': connectFour,
  gomoku,
  reversi,
  'human-chat': humanChat,
  qna,
};

export const PRECOMPILED = precompiledTable(Object.values(PAGE_VALIDATORS));
