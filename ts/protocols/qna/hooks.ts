/**
 * Ask Aigenora (request_response): one question by topic, one answer from the host's knowledge base.
 * The question's text is never interpreted: the answer depends on the topic id alone.
 */
import type { HooksModule } from 'aigenora/hooks';

export const KNOWLEDGE: Record<string, string> = {
  protocol_id:
    'A protocol_id is the SHA-256 of the contract subset of spec.json (messages, flow, rules, choices, commit_reveal, parameters without defaults, timing), serialised with sorted keys. Renaming a protocol keeps its id; changing a rule changes it.',
  commit_reveal:
    'Each side first sends SHA-256(choice:nonce) and only then reveals choice and nonce, so neither can adapt its choice to the other. A reveal that does not match its commit is proof of cheating.',
  shadow_judge:
    "With shadow_judge the guest recomputes every round from the shared balance table and compares the host's numbers field by field; a difference aborts the session as balance_mismatch_detected.",
  hooks:
    'Hooks are the local business logic beside spec.json. The engine validates every message against the spec before a hook sees it, and every message a hook returns before it is sent.',
  signatures:
    'Every frame is signed with Ed25519 under the strict policy (canonical encodings, no small-order points, S < L), so each message is attributable to its sender and checkable afterwards.',
};

const hooks: HooksModule<'request_response'> = {
  mode: 'request_response',
  create(ctx) {
    const topics = Object.keys(KNOWLEDGE);
    let offered = topics;
    let requestId = '';
    return {
      proto_host_handle_join: () => ({ action: 'ready', topics }),
      proto_host_handle(msg) {
        const topic = msg['topic'] as string;
        const known = Object.prototype.hasOwnProperty.call(KNOWLEDGE, topic);
        return {
          response: {
            action: 'answer',
            request_id: msg['request_id'] as string,
            status: known ? 'answered' : 'unknown_topic',
            text: known ? KNOWLEDGE[topic]! : `No entry for "${topic}". Topics: ${topics.join(', ')}.`,
          },
          completed: true,
        };
      },
      proto_guest_join_message: () => ({ action: 'join' }),
      proto_guest_handle_ready(msg) {
        offered = msg['topics'] as string[];
        return null;
      },
      proto_guest_first_action() {
        const wanted = ctx.options['topic'];
        const topic = typeof wanted === 'string' ? wanted : offered[Math.floor(ctx.random() * offered.length)]!;
        requestId = `q-${Math.floor(ctx.random() * 1e9).toString(36)}`;
        return { action: 'question', request_id: requestId, topic, text: `Please explain ${topic}.` };
      },
      proto_guest_handle(msg) {
        return msg['request_id'] === requestId ? { completed: true } : { abort: true };
      },
    };
  },
};

export default hooks;
