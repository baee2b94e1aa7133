/**
 * Human chat (free). Agents only relay: peer text is displayed, never interpreted, never handed to
 * anything that treats it as instructions (spec rules.security). The engine validates every message
 * and numbers chat lines; these hooks keep the conversation for display.
 */
import type { HooksModule, Message } from 'aigenora/hooks';

export interface ChatLine {
  from: 'me' | 'peer';
  seq: number;
  text: string;
}

/** Control characters other than tab and newline are shown escaped, so peer text cannot drive the terminal. */
export function displaySafe(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const hooks: HooksModule<'free'> = {
  mode: 'free',
  // As proto_display shows the conversation: the text as it was said (the caller escapes it for the terminal).
  narrator: (me) => (msg, from) => {
    const who = from === me ? 'you' : 'peer';
    if (msg.action === 'chat') return `${who} #${String(msg['seq'])}: ${String(msg['text'])}`;
    return msg.action === 'end' ? `(${who} left)` : undefined;
  },
  create() {
    const lines: ChatLine[] = [];
    let ended = false;
    return {
      proto_on_message(msg: Message) {
        if (msg.action === 'chat') lines.push({ from: 'peer', seq: msg['seq'] as number, text: msg['text'] as string });
      },
      proto_on_send(msg: Message) {
        if (msg.action === 'chat') lines.push({ from: 'me', seq: msg['seq'] as number, text: msg['text'] as string });
      },
      proto_on_end() {
        ended = true;
      },
      // A person may say the lines (free mode asks for each while the peer's keep coming).
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_display(msg, direction) {
        if (msg.action === 'end') return direction === 'sent' ? '(you left)' : '(peer left)';
        if (msg.action !== 'chat') return undefined;
        return `${direction === 'sent' ? 'you' : 'peer'} #${String(msg['seq'])}: ${displaySafe(msg['text'] as string)}`;
      },
      // Exposed for the UI and tests; not part of the hook interface.
      transcript: () => ({ lines: [...lines], ended }),
    } as ReturnType<HooksModule<'free'>['create']>;
  },
};

export default hooks;
