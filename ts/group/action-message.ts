/**
 * A group protocol's spec declares two wire messages: the member's action (guest_to_host, carrying
 * client_seq and the action as `payload`) and the leader's frame (host_to_guest, carrying `frame`).
 * The engine checks every member action against the spec's declaration before the leader's hooks see
 * it, as it checks every two-party message.
 */
import type { Spec } from '../spec/types.js';
import { messageValidator, type MessageError } from '../spec/messages.js';

export interface GroupMessages {
  action: string;
  frame: string;
  /** The action wrapped as the spec's action message, checked; errors when the spec refuses it. */
  check(clientSeq: number, payload: unknown): MessageError[];
}

export class GroupMessageError extends Error {
  readonly code = 'GROUP_SPEC_MESSAGES';
}

export function groupMessages(protocolId: string, spec: Spec, specText?: string): GroupMessages {
  const find = (direction: string, field: string) => spec.messages.find((m) => m.direction === direction && field in (m.fields ?? {}));
  const action = find('guest_to_host', 'payload');
  const frame = find('host_to_guest', 'frame');
  if (!action || !('client_seq' in (action.fields ?? {})))
    throw new GroupMessageError('a group spec needs a guest_to_host message with client_seq and payload fields');
  if (!frame) throw new GroupMessageError('a group spec needs a host_to_guest message with a frame field');
  const validator = messageValidator(protocolId, spec, specText);
  return {
    action: action.name,
    frame: frame.name,
    check(clientSeq, payload) {
      const r = validator.check({ action: action.name, client_seq: clientSeq, payload }, 'guest_to_host', action.name);
      return r.ok ? [] : r.errors;
    },
  };
}
