/**
 * The protocols the agent page plays: the two-party built-ins whose hooks run in a browser. Their
 * spec.json texts come from the server that serves the page (byte for byte, so their protocol_id is
 * the host's); their hooks are part of the page.
 */
import type { Crypto } from '../crypto/backend.js';
import type { HooksModule } from '../hooks/types.js';
import coinFlip from '../protocols/coin-flip/hooks.js';
import connectFour from '../protocols/connect-four/hooks.js';
import gomoku from '../protocols/gomoku/hooks.js';
import guessNumber from '../protocols/guess-number/hooks.js';
import humanChat from '../protocols/human-chat/hooks.js';
import qna from '../protocols/qna/hooks.js';
import reversi from '../protocols/reversi/hooks.js';
import rps from '../protocols/rps/hooks.js';
import { toHex } from '../crypto/encoding.js';
import { checkSpecText, checkSpecTextOfId } from '../spec/check.js';
import { ValidatorUnavailable } from '../spec/errors.js';
import { messageValidator } from '../spec/messages.js';
import type { PageProtocol } from './agent.js';
import { PAGE_PROTOCOL_IDS } from './page-validators.js';

/** Built-in folder → hooks. The server offers the spec of each of these folders (PAGE_FOLDERS). */
export const PAGE_HOOKS: Record<string, HooksModule> = {
  rps: rps as HooksModule,
  'coin-flip': coinFlip as HooksModule,
  'guess-number': guessNumber as HooksModule,
  'connect-four': connectFour as HooksModule,
  gomoku: gomoku as HooksModule,
  reversi: reversi as HooksModule,
  'human-chat': humanChat as HooksModule,
  qna: qna as HooksModule,
};

/** What the server sends at ./protocols.json. */
export interface ServedSpec {
  alias: string;
  folder: string;
  spec: string;
}

/**
 * The served specs the page can play, with their protocol_id. A text whose SHA-256 is that of a built-in
 * as the page was built gets the protocol_id recorded for it then; any other text (whatever its name)
 * has it computed, after `loadProtocolId` (in a browser, fetching the pyjson WASM module) has resolved.
 *
 * @param loadProtocolId - makes crypto.protocolId available; called at most once, and only when needed
 */
export async function pageProtocols(
  crypto: Crypto,
  served: ServedSpec[],
  loadProtocolId: () => Promise<unknown> = async () => undefined,
): Promise<PageProtocol[]> {
  const out: PageProtocol[] = [];
  let loading: Promise<unknown> | undefined;
  for (const s of served) {
    const hooks = PAGE_HOOKS[s.folder];
    if (!hooks) continue;
    const known = PAGE_PROTOCOL_IDS.get(toHex(crypto.sha256(new TextEncoder().encode(s.spec))));
    if (!known) await (loading ??= loadProtocolId());
    const l = known ? checkSpecTextOfId(s.spec, known) : checkSpecText(crypto, s.spec);
    if (!l.ok || !l.protocolId) continue;
    // The page validates with the validators compiled into it: a served spec that differs from the
    // page's build of that built-in has none, and is left out (openInvitation then names the CLI).
    try {
      messageValidator(l.protocolId, l.spec, s.spec);
    } catch (e) {
      if (e instanceof ValidatorUnavailable) continue;
      throw e;
    }
    out.push({ alias: s.alias, spec: l.spec, specText: s.spec, protocolId: l.protocolId, hooks });
  }
  return out;
}
