/**
 * The registry client: the reference's REST API (NOTES A7, A8, A9, A15) as its Python client calls it,
 * same paths, signed headers, body bytes and accepted statuses. The server is not trusted: answers are
 * size-capped and parsed strictly, a returned session_id must be the one computed here, a fetched spec
 * must hash to the protocol_id asked for, and a box is opened only with our own key.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { Entries } from '../crypto/jcs.js';
import { sessionId as computeSessionId } from '../engine/frame.js';
import { MAX_SPEC_BYTES } from '../spec/check.js';
import { protocolId as computeProtocolId } from '../spec/protocol-id.js';
import { registrationBody, signRegistration } from './auth.js';
import { RegistryError, sanitize } from './errors.js';
import { normalizeBaseUrl, signedRequest, type Answer, type HttpOptions } from './http.js';
import { asInvitation, INVITATION_TYPES, type Invitation, type InvitationBody, type InvitationType } from './invitation.js';
import { asGroupAdmission, asGroupRecord, checkGroupId, type GroupAdmission, type GroupRecord } from './group.js';
import { admissionCanonical, transportBindingCanonical, type Checkpoint } from '../group/wire.js';
import { compactJson, encodeBody, member, parseTree, RawJson } from './json.js';

export { RegistryError } from './errors.js';
export type { RegistryErrorCode } from './errors.js';
export type { Invitation, InvitationBody, InvitationInput, InvitationType } from './invitation.js';
export { buildInvitation, checkInvitationBinding } from './invitation.js';
export type { GroupAdmission, GroupRecord } from './group.js';

/** POST /api/v1/groups: the room's policy, which the server checks against the registered spec. */
export interface GroupPolicy {
  min_participants: number;
  max_participants: number;
  allow_late_join: boolean;
  recovery_mode: string;
}

export type GroupStatusChange = 'active' | 'closed' | 'failed';

export interface RegistryClientOptions extends HttpOptions {
  /** The hardest registration proof of work this client will attempt (zero bytes); default 3. */
  maxPowDifficulty?: number;
}

export interface BrowseFilter {
  protocolId?: string;
  type?: InvitationType;
  tags?: readonly string[];
  limit?: number;
}

/** The session proof both sides signed (NOTES A7), keys in the reference's order. */
export interface SessionProof {
  post_id: string;
  host_public_key: string;
  guest_public_key: string;
  protocol_id: string;
  session_nonce: string;
  host_signature: string;
  guest_signature: string;
}

export type SessionStatus = 'closed' | 'failed' | 'cancelled';
export type Winner = 'host' | 'guest' | 'draw';

export interface InboxEntry {
  id: string;
  size?: number;
  created_at?: string;
  expires_at?: string;
}

export interface ProtocolSummary {
  protocol_id: string;
  name?: string;
  description?: string;
  [key: string]: unknown;
}

/** A plaintext the reference accepts in one box: 256 characters (code points, as Python counts). */
export const INBOX_MAX_CHARS = 256;
/** Browse answers hold at most this many invitations (the reference's service limit). */
export const BROWSE_MAX_ITEMS = 100;

const HEX64 = /^[0-9a-f]{64}$/;
const TAG = /^[A-Za-z0-9_.:-]{1,64}$/;
/** An id put into a path: starts with a letter or digit so no segment is `.` or `..` (URL parsing would fold it). */
const PATH_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

function segment(what: string, id: string): string {
  if (!PATH_ID.test(id))
    throw new RegistryError('REGISTRY_BAD_ARGUMENT', `${what} ${JSON.stringify(sanitize(id, 80))} is not an id (letters, digits, _ . : -, at most 128)`);
  return id;
}

function hex64(what: string, v: string): string {
  if (!HEX64.test(v)) throw new RegistryError('REGISTRY_BAD_ARGUMENT', `${what} must be 64 lowercase hex characters`);
  return v;
}

function object(a: Answer, what: string): Record<string, unknown> {
  if (a.body === null || typeof a.body !== 'object' || Array.isArray(a.body))
    throw new RegistryError('REGISTRY_BAD_RESPONSE', `${what}: the answer is not a JSON object`, a.status);
  return a.body as Record<string, unknown>;
}

const optString = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

function query(pairs: [string, string | number | undefined][]): string {
  const p = new URLSearchParams();
  for (const [k, v] of pairs) if (v !== undefined) p.append(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

function limitOf(v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 1 || v > BROWSE_MAX_ITEMS)
    throw new RegistryError('REGISTRY_BAD_ARGUMENT', `limit must be an integer from 1 to ${BROWSE_MAX_ITEMS}`);
  return v;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

function fromBase64Strict(s: string, status: number): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0)
    throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the ciphertext is not standard base64', status);
  return new Uint8Array(Buffer.from(s, 'base64'));
}

export class RegistryClient {
  readonly baseUrl: string;
  readonly publicKey: string;
  readonly #seed: Uint8Array;

  constructor(
    baseUrl: string,
    seed: Uint8Array,
    readonly crypto: Crypto,
    readonly opts: RegistryClientOptions = {},
  ) {
    this.baseUrl = normalizeBaseUrl(baseUrl);
    if (seed.byteLength !== 32) throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'the identity seed must be 32 bytes');
    this.#seed = seed;
    this.publicKey = toHex(crypto.ed25519PublicKey(seed));
  }

  /**
   * One signed call. `body` is serialised as the reference does (compact, non-ASCII raw, keys in
   * insertion order); undefined sends no body. Statuses outside `expected` are REGISTRY_HTTP_<status>.
   */
  request(method: string, path: string, body?: unknown, expected: readonly number[] = [200], maxResponseBytes?: number): Promise<Answer> {
    if (!path.startsWith('/')) throw new RegistryError('REGISTRY_BAD_ARGUMENT', `path ${JSON.stringify(path)} must start with /`);
    return signedRequest({
      baseUrl: this.baseUrl,
      seed: this.#seed,
      crypto: this.crypto,
      method,
      path,
      body: body === undefined ? new Uint8Array() : utf8(encodeBody(body)),
      expected,
      opts: this.opts,
      ...(maxResponseBytes !== undefined && { maxResponseBytes }),
    });
  }

  /** Challenge, proof of work, registration. A 409 means this key is registered already. */
  async register(nickname: string, bio = ''): Promise<{ alreadyRegistered: boolean; answer: unknown }> {
    if (nickname.trim() === '') throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'the nickname is empty');
    const ch = object(await this.request('GET', '/api/v1/auth/challenge'), 'auth challenge');
    const nonce = optString(ch['nonce']) || optString(ch['challenge']) || '';
    if (nonce === '' || nonce.length > 512) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the auth challenge has no usable nonce');
    const difficulty = ch['difficulty'] === undefined ? 1 : ch['difficulty'];
    const max = this.opts.maxPowDifficulty ?? 3;
    if (typeof difficulty !== 'number' || !Number.isInteger(difficulty) || difficulty < 0)
      throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the auth challenge has no usable difficulty');
    if (difficulty > max) throw new RegistryError('REGISTRY_POW_TOO_HARD', `the server asks for ${difficulty} zero bytes; this client solves at most ${max}`);
    const counter = this.crypto.powSolve(nonce, this.publicKey, difficulty);
    const reg = signRegistration(this.crypto, this.#seed, nonce, nickname, counter, bio);
    const a = await this.request('POST', '/api/v1/auth/register', new RawJson(registrationBody(reg)), [200, 201, 409]);
    return { alreadyRegistered: a.status === 409, answer: a.body };
  }

  async postInvitation(body: InvitationBody): Promise<{ postId: string }> {
    const a = await this.request('POST', '/api/v1/invitations', body, [201]);
    const postId = optString(object(a, 'post invitation')['post_id']);
    if (!postId || !PATH_ID.test(postId)) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the new invitation has no usable post_id', a.status);
    return { postId };
  }

  async renewInvitation(postId: string): Promise<void> {
    await this.request('POST', `/api/v1/invitations/${segment('post_id', postId)}/renew`, {});
  }

  async cancelInvitation(postId: string): Promise<void> {
    await this.request('DELETE', `/api/v1/invitations/${segment('post_id', postId)}`, undefined, [204]);
  }

  async getInvitation(postId: string): Promise<Invitation> {
    const a = await this.request('GET', `/api/v1/invitations/${segment('post_id', postId)}`);
    return asInvitation(a.body, a.status);
  }

  async browse(filter: BrowseFilter = {}): Promise<{ items: Invitation[]; total: number }> {
    if (filter.protocolId !== undefined) hex64('protocol_id', filter.protocolId);
    if (filter.type !== undefined && !INVITATION_TYPES.includes(filter.type))
      throw new RegistryError('REGISTRY_BAD_ARGUMENT', `type must be one of ${INVITATION_TYPES.join(', ')}`);
    const tags = filter.tags?.length ? [...new Set(filter.tags)] : undefined;
    if (tags && (tags.length > 10 || !tags.every((t) => TAG.test(t))))
      throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'tags: at most 10, each 1-64 characters of A-Za-z0-9_.:-');
    const path = `/api/v1/invitations${query([
      ['protocol_id', filter.protocolId],
      ['type', filter.type],
      ['tags', tags?.join(',')],
      ['limit', limitOf(filter.limit)],
    ])}`;
    const a = await this.request('GET', path);
    let raw: unknown;
    let total: unknown;
    if (Array.isArray(a.body)) raw = a.body;
    else {
      const o = object(a, 'browse');
      raw = o['results'] ?? [];
      total = o['total'];
    }
    if (!Array.isArray(raw)) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'browse: results is not an array', a.status);
    if (raw.length > BROWSE_MAX_ITEMS)
      throw new RegistryError('REGISTRY_BAD_RESPONSE', `browse: more than ${BROWSE_MAX_ITEMS} invitations in one answer`, a.status);
    const items = raw.map((v) => asInvitation(v, a.status));
    return { items, total: typeof total === 'number' && Number.isSafeInteger(total) && total >= 0 ? total : items.length };
  }

  /** Posts the proof and answers the session_id, refusing one that is not the id of this proof. */
  async postSessionProof(proof: SessionProof): Promise<string> {
    const expected = computeSessionId(this.crypto, proof.post_id, proof.protocol_id, proof.host_public_key, proof.guest_public_key, proof.session_nonce);
    const body: SessionProof = {
      post_id: proof.post_id,
      host_public_key: proof.host_public_key,
      guest_public_key: proof.guest_public_key,
      protocol_id: proof.protocol_id,
      session_nonce: proof.session_nonce,
      host_signature: proof.host_signature,
      guest_signature: proof.guest_signature,
    };
    const a = await this.request('POST', '/api/v1/sessions', body, [201]);
    const returned = object(a, 'session proof')['session_id'];
    if (returned !== expected)
      throw new RegistryError(
        'REGISTRY_SESSION_ID_MISMATCH',
        `the server answered session_id ${JSON.stringify(sanitize(String(returned), 80))}, not ${expected}`,
        a.status,
      );
    return expected;
  }

  /** Closes the session on the server; a 409 (the other side closed it first) is success. */
  async postSessionStatus(sessionId: string, status: SessionStatus, winner?: Winner): Promise<void> {
    await this.request('POST', `/api/v1/sessions/${hex64('session_id', sessionId)}/status`, { status, ...(winner && { winner }) }, [200, 409]);
  }

  async postSessionResult(sessionId: string, winner: Winner): Promise<void> {
    await this.request('POST', `/api/v1/sessions/${hex64('session_id', sessionId)}/result`, { winner });
  }

  /** Seals `plaintext` to the recipient's Ed25519 key (AGBX1) and posts only the ciphertext. */
  async inboxSend(recipientPublicKey: string, plaintext: string): Promise<{ id?: string; expires_at?: string; answer: Record<string, unknown> }> {
    hex64('recipient public key', recipientPublicKey);
    if ([...plaintext].length > INBOX_MAX_CHARS)
      throw new RegistryError('INBOX_MESSAGE_TOO_LONG', `the message exceeds ${INBOX_MAX_CHARS} characters (the inbox's limit for one message)`);
    let boxed: Uint8Array;
    try {
      boxed = this.crypto.boxSeal(fromHex(recipientPublicKey), utf8(plaintext));
    } catch (e) {
      if (e instanceof CryptoError) throw new RegistryError('REGISTRY_BAD_ARGUMENT', `cannot seal to ${recipientPublicKey.slice(0, 16)}…: ${e.code}`);
      throw e;
    }
    const a = await this.request('POST', '/api/v1/inbox', { recipient_public_key: recipientPublicKey, ciphertext: base64(boxed) }, [200, 201]);
    const o = object(a, 'inbox send');
    const id = optString(o['id']);
    const expires = optString(o['expires_at']);
    return { ...(id !== undefined && { id }), ...(expires !== undefined && { expires_at: expires }), answer: o };
  }

  async inboxList(opts: { limit?: number; cursor?: string } = {}): Promise<{ entries: InboxEntry[]; nextCursor?: string }> {
    if (opts.cursor !== undefined && (opts.cursor === '' || opts.cursor.length > 512))
      throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'the cursor is empty or too long');
    const a = await this.request(
      'GET',
      `/api/v1/inbox${query([
        ['limit', limitOf(opts.limit)],
        ['cursor', opts.cursor],
      ])}`,
    );
    const o = object(a, 'inbox list');
    const raw = o['entries'] ?? [];
    if (!Array.isArray(raw) || raw.length > 1000) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'inbox list: entries is not a bounded array', a.status);
    const entries = raw.map((e): InboxEntry => {
      const r = e !== null && typeof e === 'object' && !Array.isArray(e) ? (e as Record<string, unknown>) : {};
      const id = optString(r['id']);
      if (id === undefined) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'inbox list: an entry has no id', a.status);
      const size = typeof r['size'] === 'number' ? r['size'] : undefined;
      const created = optString(r['created_at']);
      const expires = optString(r['expires_at']);
      return {
        id,
        ...(size !== undefined && { size }),
        ...(created !== undefined && { created_at: created }),
        ...(expires !== undefined && { expires_at: expires }),
      };
    });
    const next = optString(o['next_cursor']);
    return { entries, ...(next && { nextCursor: next }) };
  }

  /** Fetches a box and opens it with our key; one that does not open (not ours, tampered) is INBOX_OPEN_FAILED. */
  async inboxRead(id: string): Promise<{ id: string; plaintext: string }> {
    const a = await this.request('GET', `/api/v1/inbox/${segment('message id', id)}`);
    const ct = object(a, 'inbox read')['ciphertext'];
    if (typeof ct !== 'string') throw new RegistryError('REGISTRY_BAD_RESPONSE', 'inbox read: no ciphertext', a.status);
    let opened: Uint8Array;
    try {
      opened = this.crypto.boxOpen(this.#seed, fromBase64Strict(ct, a.status));
    } catch (e) {
      if (e instanceof CryptoError) throw new RegistryError('INBOX_OPEN_FAILED', `message ${id} does not open with this identity (${e.code})`, a.status);
      throw e;
    }
    // Undecodable bytes are shown replaced, as the reference does; the sender chose them.
    return { id, plaintext: new TextDecoder('utf-8').decode(opened) };
  }

  async inboxDelete(id: string): Promise<void> {
    await this.request('DELETE', `/api/v1/inbox/${segment('message id', id)}`);
  }

  // ---- groups (NOTES A18; the reference's proto/group_control.py, same bodies and statuses) ----

  /** Opens the group of one of our invitations; the server lists us as its leader at seat 0. */
  async createGroup(postId: string, policy: GroupPolicy): Promise<GroupRecord> {
    const a = await this.request('POST', '/api/v1/groups', { post_id: segment('post_id', postId), ...policy }, [200, 201]);
    return asGroupRecord(a.body, a.status);
  }

  async getGroup(groupId: string): Promise<GroupRecord> {
    const a = await this.request('GET', `/api/v1/groups/${checkGroupId(groupId)}`);
    return asGroupRecord(a.body, a.status);
  }

  async getGroupByPost(postId: string): Promise<GroupRecord> {
    const a = await this.request('GET', `/api/v1/groups/by-post/${segment('post_id', postId)}`);
    return asGroupRecord(a.body, a.status);
  }

  /**
   * Asks the server to admit us: the admission string of this group's current leader and epoch, signed
   * by that leader (over the channel) and here by us. The answer is the member record (id and seat).
   */
  async admitGroupMember(
    group: Pick<GroupRecord, 'group_id' | 'leader_public_key' | 'protocol_id' | 'leader_epoch'>,
    joinNonce: string,
    leaderSignature: string,
  ): Promise<GroupAdmission> {
    const statement = admissionCanonical({
      group_id: group.group_id,
      leader_public_key: group.leader_public_key,
      member_public_key: this.publicKey,
      protocol_id: group.protocol_id,
      leader_epoch: group.leader_epoch,
      join_nonce: joinNonce,
    });
    const body = {
      join_nonce: joinNonce,
      leader_epoch: group.leader_epoch,
      leader_signature: leaderSignature,
      member_signature: toHex(this.crypto.ed25519Sign(this.#seed, utf8(statement))),
    };
    const a = await this.request('POST', `/api/v1/groups/${checkGroupId(group.group_id)}/members`, body, [200, 201]);
    const m = asGroupAdmission(a.body, a.status);
    if (m.public_key !== this.publicKey || m.group_id !== group.group_id)
      throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the admission names another member or group', a.status);
    return m;
  }

  /** Our transport binding for a ticket (the leader's endpoint the server publishes to members). */
  private bindingSignature(ticket: string, protocolId: string): string {
    return toHex(this.crypto.ed25519Sign(this.#seed, utf8(transportBindingCanonical(this.publicKey, 'iroh', ticket, protocolId))));
  }

  /** The leader's lease renewal: its epoch, the recovery floor (a checkpoint a member acknowledged) and its ticket. */
  async groupHeartbeat(
    groupId: string,
    o: { protocolId: string; leaderEpoch: number; checkpointSeq: number; checkpointHash: string; ticket: string },
  ): Promise<GroupRecord> {
    const body = {
      leader_epoch: o.leaderEpoch,
      checkpoint_seq: o.checkpointSeq,
      checkpoint_hash: o.checkpointHash,
      iroh_ticket: o.ticket,
      transport_binding_signature: this.bindingSignature(o.ticket, o.protocolId),
    };
    const a = await this.request('POST', `/api/v1/groups/${checkGroupId(groupId)}/heartbeat`, body);
    return asGroupRecord(a.body, a.status);
  }

  async groupMemberHeartbeat(groupId: string): Promise<void> {
    await this.request('POST', `/api/v1/groups/${checkGroupId(groupId)}/members/heartbeat`, {});
  }

  /**
   * Claims the next epoch after `expectedEpoch`, from a checkpoint its leader certified, with our new
   * endpoint. The server grants one claim per epoch, and only once the lease is over.
   */
  async claimGroupLeader(
    groupId: string,
    o: {
      protocolId: string;
      expectedEpoch: number;
      checkpoint: Pick<Checkpoint, 'seq' | 'checkpoint_hash' | 'frame_hash' | 'membership_version' | 'checkpoint_signature'>;
      ticket: string;
    },
  ): Promise<GroupRecord> {
    const cp = o.checkpoint;
    const body = {
      expected_epoch: o.expectedEpoch,
      checkpoint_seq: cp.seq,
      checkpoint_hash: cp.checkpoint_hash,
      checkpoint_frame_hash: cp.frame_hash,
      checkpoint_membership_version: cp.membership_version,
      checkpoint_signature: cp.checkpoint_signature,
      iroh_ticket: o.ticket,
      transport_binding_signature: this.bindingSignature(o.ticket, o.protocolId),
    };
    const a = await this.request('POST', `/api/v1/groups/${checkGroupId(groupId)}/claim-leader`, body);
    const g = asGroupRecord(a.body, a.status);
    if (g.leader_public_key !== this.publicKey || g.leader_epoch !== o.expectedEpoch + 1)
      throw new RegistryError(
        'REGISTRY_BAD_RESPONSE',
        `the claim's answer names leader ${g.leader_public_key.slice(0, 16)} of epoch ${g.leader_epoch}`,
        a.status,
      );
    return g;
  }

  async leaveGroup(groupId: string): Promise<GroupRecord> {
    const a = await this.request('POST', `/api/v1/groups/${checkGroupId(groupId)}/leave`, {});
    return asGroupRecord(a.body, a.status);
  }

  /** The leader of `leaderEpoch` sets the room's status (closed or failed also takes its invitation down). */
  async setGroupStatus(groupId: string, leaderEpoch: number, status: GroupStatusChange): Promise<GroupRecord> {
    const a = await this.request('POST', `/api/v1/groups/${checkGroupId(groupId)}/status`, { leader_epoch: leaderEpoch, status });
    return asGroupRecord(a.body, a.status);
  }

  /** Publishes a spec (its text as read); answers the protocol_id computed here. 409: known already. */
  async registerProtocol(specText: string): Promise<{ protocolId: string; alreadyRegistered: boolean; answer: unknown }> {
    let protocolId: string;
    let tree;
    try {
      protocolId = computeProtocolId(this.crypto, specText);
      tree = parseTree(specText);
    } catch (e) {
      if (e instanceof CryptoError) throw new RegistryError('REGISTRY_BAD_ARGUMENT', `the spec is not strict JSON (${e.code})`);
      throw e;
    }
    if (!(tree instanceof Entries)) throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'the spec is not a JSON object');
    const str = (k: string) => {
      const v = member(tree, k);
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    const body = {
      protocol_id: protocolId,
      name: str('name') ?? protocolId,
      description: str('description') ?? '',
      type: str('type') ?? 'protocol',
      spec_json: new RawJson(compactJson(tree)),
    };
    const a = await this.request('POST', '/api/v1/protocols', body, [200, 201, 409], MAX_SPEC_BYTES * 2);
    return { protocolId, alreadyRegistered: a.status === 409, answer: a.body };
  }

  /**
   * Fetches a spec and answers it only if it hashes to `protocolId`. `specText` is compact JSON in the
   * server's key order (the bytes the reference stores as spec.json).
   */
  async fetchProtocol(protocolId: string): Promise<{ protocolId: string; specText: string }> {
    hex64('protocol_id', protocolId);
    const a = await this.request('GET', `/api/v1/protocols/${protocolId}`, undefined, [200], MAX_SPEC_BYTES * 2);
    let spec = member(parseTree(a.text), 'spec_json') ?? parseTree(a.text);
    try {
      if (typeof spec === 'string') spec = parseTree(spec);
    } catch (e) {
      if (e instanceof CryptoError) throw new RegistryError('REGISTRY_BAD_RESPONSE', `spec_json is not strict JSON (${e.code})`, a.status);
      throw e;
    }
    if (!(spec instanceof Entries)) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'the answer holds no spec object', a.status);
    const specText = compactJson(spec);
    const actual = computeProtocolId(this.crypto, specText);
    if (actual !== protocolId)
      throw new RegistryError('REGISTRY_PROTOCOL_MISMATCH', `asked for ${protocolId}, the server's spec hashes to ${actual}; refused`, a.status);
    return { protocolId, specText };
  }

  /** One page of the server's protocol directory, newest first. */
  async listProtocols(opts: { limit?: number; cursor?: string } = {}): Promise<{ results: ProtocolSummary[]; nextCursor?: string }> {
    if (opts.cursor !== undefined && (opts.cursor === '' || opts.cursor.length > 512))
      throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'the cursor is empty or too long');
    const a = await this.request(
      'GET',
      `/api/v1/protocols${query([
        ['limit', limitOf(opts.limit) ?? 20],
        ['cursor', opts.cursor],
      ])}`,
    );
    const o = object(a, 'protocol list');
    const raw = o['results'] ?? [];
    if (!Array.isArray(raw) || raw.length > BROWSE_MAX_ITEMS)
      throw new RegistryError('REGISTRY_BAD_RESPONSE', 'protocol list: results is not a bounded array', a.status);
    const results = raw.map((p): ProtocolSummary => {
      const r = p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
      if (typeof r['protocol_id'] !== 'string' || !HEX64.test(r['protocol_id']))
        throw new RegistryError('REGISTRY_BAD_RESPONSE', 'protocol list: an entry has no protocol_id', a.status);
      return { ...r, protocol_id: r['protocol_id'] };
    });
    const next = optString(o['next_cursor']);
    return { results, ...(next && { nextCursor: next }) };
  }

  /**
   * The reference's discovery: pages of the directory (at most `maxPages`), filtered here on name and
   * description, so the server is never asked to scan its table for a substring.
   */
  async searchProtocols(
    text?: string,
    opts: { limit?: number; maxPages?: number; cursor?: string } = {},
  ): Promise<{ results: ProtocolSummary[]; nextCursor?: string }> {
    const maxPages = opts.maxPages ?? (text ? 5 : 1);
    const found: ProtocolSummary[] = [];
    let cursor = opts.cursor;
    for (let page = 0; page < maxPages; page++) {
      const r = await this.listProtocols({ ...(opts.limit !== undefined && { limit: opts.limit }), ...(cursor !== undefined && { cursor }) });
      found.push(...r.results);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    const q = text?.toLowerCase();
    const hit = (p: ProtocolSummary) => !q || [p.name, p.description].some((v) => typeof v === 'string' && v.toLowerCase().includes(q));
    return { results: found.filter(hit), ...(cursor && { nextCursor: cursor }) };
  }
}
