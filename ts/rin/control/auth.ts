/**
 * Who may call and what they may see: the bearer token (R65), the configured client principal, and
 * the visibility rules of actors and worlds (R76). The principal is fixed by configuration; nothing
 * here reads authority from a request body.
 */
import { timingSafeEqual } from 'node:crypto';
import { RinError } from '../errors.js';
import type { ActorPublication, Principal, WorldPublication } from '../types.js';
import { validatePrincipal } from '../validate.js';
import { SCOPE_ACTOR_CONTROL, SCOPE_ACTOR_EXECUTE, SCOPE_ACTOR_READ, SCOPE_HOST_ADMIN, SCOPE_OPERATION_CANCEL } from './contracts.js';

const MIN_TOKEN_BYTES = 32;

/** Refuses a token shorter than 32 bytes (R65): the daemon will not start with a guessable one. */
export function checkToken(token: string): Uint8Array {
  const bytes = new TextEncoder().encode(token);
  if (bytes.length < MIN_TOKEN_BYTES) throw new RinError('invalid', 'token must contain at least 32 bytes');
  return bytes;
}

/**
 * `Authorization: Bearer <token>`, compared in constant time. The reference also takes a bare token
 * (it trims an optional prefix); the prefix is required here, which no correct client notices.
 */
export function bearerMatches(header: string | undefined, token: Uint8Array): boolean {
  const raw = header ?? '';
  const prefixed = raw.startsWith('Bearer ');
  const provided = new TextEncoder().encode(prefixed ? raw.slice(7) : '');
  // Most wrong tokens differ in length; compare anyway so the time taken does not depend on where
  // a same-length token first differs.
  const same = prefixed && provided.length === token.length;
  return timingSafeEqual(same ? provided : token, token) && same;
}

export function hasScope(principal: Principal, scope: string): boolean {
  return (principal.granted_scopes ?? []).includes(scope);
}

/** A client principal must be valid and hold at least one control-plane scope. */
export function checkClientPrincipal(principal: Principal): Principal {
  try {
    validatePrincipal(principal);
  } catch (e) {
    throw new RinError('invalid', `client principal: ${e instanceof Error ? e.message : String(e)}`);
  }
  const scopes = [SCOPE_ACTOR_READ, SCOPE_ACTOR_CONTROL, SCOPE_ACTOR_EXECUTE, SCOPE_OPERATION_CANCEL, SCOPE_HOST_ADMIN];
  if (!scopes.some((s) => hasScope(principal, s))) throw new RinError('invalid', 'client principal has no Control Plane scope');
  // Sorted, as the reference keeps it (its info route and operation requests show this order).
  const copy: Principal = { id: principal.id };
  if (principal.granted_scopes !== undefined && principal.granted_scopes.length > 0) copy.granted_scopes = [...principal.granted_scopes].sort();
  return copy;
}

/** R76: host.admin; or the scope and (owner, or the external controller principal). */
export function canAccessActor(principal: Principal, actor: ActorPublication, scope: string): boolean {
  if (hasScope(principal, SCOPE_HOST_ADMIN)) return true;
  if (!hasScope(principal, scope)) return false;
  if (principal.id === actor.owner_principal_id) return true;
  const authority = actor.decision_authority;
  return authority.source === 'external' && authority.controller_principal_id === principal.id;
}

/** R76: a world is listed to host.admin, to actor.read principals it names, and to readers of any of its actors. */
export function publicationVisible(principal: Principal, world: WorldPublication): boolean {
  if (hasScope(principal, SCOPE_HOST_ADMIN)) return true;
  if (hasScope(principal, SCOPE_ACTOR_READ) && (world.visible_principal_ids ?? []).includes(principal.id)) return true;
  return world.actors.some((a) => canAccessActor(principal, a, SCOPE_ACTOR_READ));
}
