/**
 * What every route module is handed: the database, the crypto backend, the clock, the configuration
 * and the log. The clock is injected so expiry (challenges, request ids, invitations, inbox) is tested
 * without sleeping.
 */
import type { Hono } from 'hono';
import type { Crypto } from '../crypto/backend.js';
import type { Db } from './db.js';
import type { Log } from './log.js';

export interface RateLimit {
  /** Bucket size: requests allowed in a burst. */
  burst: number;
  /** Refill rate, requests per second. */
  perSecond: number;
}

export interface ServerConfig {
  /** Leading zero bytes a registration's proof of work needs (0..4). */
  powDifficulty: number;
  /** How long an issued auth challenge may be answered, seconds. */
  challengeTtlSeconds: number;
  /** Accepted |X-Timestamp − now|, seconds. */
  timestampWindowSeconds: number;
  /** Largest request body accepted on /api/v1, bytes. */
  maxBodyBytes: number;
  /** Lifetime of a posted or renewed invitation, seconds. */
  invitationTtlSeconds: number;
  /** Rate limits, kept in the database and so shared by every server process on it (limits.ts). */
  ratePerKey: RateLimit;
  ratePerIp: RateLimit;
  /**
   * Behind a reverse proxy or load balancer every request comes from the proxy's address: then the
   * per-IP limit keys on the last X-Forwarded-For entry (the one the proxy appended). Off by default,
   * because a client can write that header itself.
   */
  trustProxy: boolean;
  /** The version /api/v1/version reports. */
  version: string;
}

export interface ServerContext {
  db: Db;
  crypto: Crypto;
  /** Unix milliseconds. */
  now(): number;
  config: ServerConfig;
  log: Log;
}

/** A schema step; `id` is unique across modules, e.g. 'inbox/001'. Applied once, in module order. */
export interface Migration {
  id: string;
  sql: string;
}

/** Hono context variables. Set by the signed-header middleware on every signed route. */
export interface AppVariables {
  /** The caller: 64 lowercase hex. */
  publicKey: string;
  /** The caller's X-Request-Id. */
  requestId: string;
  /** The request body exactly as signed (empty for GET/DELETE without body). */
  rawBody: Uint8Array;
}

export interface AppEnv {
  Variables: AppVariables;
}

export interface RouteModule {
  name: string;
  migrations: Migration[];
  register(app: Hono<AppEnv>, ctx: ServerContext): void;
}

export const DEFAULT_CONFIG: ServerConfig = {
  powDifficulty: 2,
  challengeTtlSeconds: 300,
  timestampWindowSeconds: 300,
  maxBodyBytes: 1024 * 1024,
  invitationTtlSeconds: 600,
  ratePerKey: { burst: 120, perSecond: 20 },
  ratePerIp: { burst: 600, perSecond: 100 },
  trustProxy: false,
  version: '0.0.0',
};
