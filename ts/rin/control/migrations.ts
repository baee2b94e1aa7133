/**
 * Schema of the rin.control/v2 server. Documents are stored as JSON text, never jsonb: jsonb would
 * reorder members and round number lexemes inside raw sub-documents (arguments, outputs).
 *
 * Operations carry their own task-timeline events (as the reference's operation store does), so a
 * pruned operation takes its events with it; the timeline sequence lives in rin_meta.
 * Host leases and world publications are not stored: hosts register and publish again (R96).
 */
import type { Migration } from '../../server/context.js';

export const RIN_MIGRATIONS: readonly Migration[] = [
  {
    id: 'rin/001',
    sql: `
CREATE TABLE rin_operations (
  operation_id text PRIMARY KEY,
  principal_id text NOT NULL,
  idempotency_key text NOT NULL,
  doc text NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (principal_id, idempotency_key)
);
CREATE TABLE rin_controller_leases (lease_id text PRIMARY KEY, doc text NOT NULL);
CREATE TABLE rin_emergency_stops (key text PRIMARY KEY, doc text NOT NULL);
CREATE TABLE rin_meta (key text PRIMARY KEY, value text NOT NULL);
`,
  },
];
