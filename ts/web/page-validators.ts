/**
 * The agent page's precompiled validators (bundled in place of ts/spec/precompiled-validators.ts by
 * scripts/build-web.mjs): those of the built-ins it plays (PAGE_HOOKS) and no others, with each one's
 * spec text hash and protocol_id recorded when they were generated.
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

/** A generated module of ts/spec/precompiled/: its validators, and the SHA-256 and protocol_id of the spec text they were made from. */
export interface PageBuiltin extends PrecompiledModule {
  specSha256: string;
  protocolId: string;
}

/** By built-in folder, as PAGE_HOOKS names them (test/web/page-bundle.test.ts checks the two agree). */
export const PAGE_VALIDATORS: Record<string, PageBuiltin> = {
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

/** protocol_id by the SHA-256 (lowercase hex) of the exact spec text it was computed from. */
export const PAGE_PROTOCOL_IDS: ReadonlyMap<string, string> = new Map(Object.values(PAGE_VALIDATORS).map((m) => [m.specSha256, m.protocolId]));
