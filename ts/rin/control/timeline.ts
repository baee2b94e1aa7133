/**
 * The task timeline `rin.task-timeline/v1`: a read-only, paginated projection of operation events.
 * It explains authoritative state and never drives execution. Cursors are `tl1:<base36 sequence>`,
 * parsed strictly (a cursor must round-trip exactly), so clients cannot forge positions.
 */
import { RinError } from '../errors.js';
import { TASK_TIMELINE_CONTRACT_VERSION, type TaskTimelineEvent, type TaskTimelinePage } from '../types.js';

export const TIMELINE_DEFAULT_LIMIT = 64;
export const TIMELINE_MAX_LIMIT = 256;
const MAX_CURSOR_CHARS = 64;

export interface TimelineQuery {
  taskId: string;
  after: number;
  afterCursor: string;
  limit: number;
}

/** One event with its timeline-wide sequence; `event.cursor` is filled in by buildTimelinePage. */
export interface TimelineRecord {
  sequence: number;
  event: Omit<TaskTimelineEvent, 'cursor'>;
}

export interface TimelineSnapshot {
  taskId: string;
  status: string;
  latestSequence: number;
  /** The oldest sequence retention dropped (0: nothing dropped). */
  truncatedBefore: number;
  records: TimelineRecord[];
}

const bad = (message: string): RinError => new RinError('invalid', message);

export function formatTimelineCursor(sequence: number): string {
  return `tl1:${sequence.toString(36)}`;
}

/** '' → 0. Anything that does not round-trip through formatTimelineCursor is refused. */
export function parseTimelineCursor(cursor: string): number {
  if (cursor === '') return 0;
  if (cursor.length > MAX_CURSOR_CHARS || !cursor.startsWith('tl1:')) throw bad('after_cursor is not a Rin timeline cursor');
  const digits = cursor.slice(4);
  if (!/^[0-9a-z]+$/.test(digits)) throw bad('after_cursor is invalid');
  const sequence = parseInt(digits, 36);
  if (!Number.isSafeInteger(sequence) || formatTimelineCursor(sequence) !== cursor) throw bad('after_cursor is invalid');
  return sequence;
}

/** Trims task_id (1..128 bytes), defaults limit to 64 (≤ 256), parses the cursor. */
export function normalizeTimelineQuery(input: { task_id: string; after_cursor?: string | undefined; limit?: number | undefined }): TimelineQuery {
  const taskId = input.task_id.trim();
  if (taskId === '') throw bad('task_id is required');
  if (Buffer.byteLength(taskId) > 128) throw bad('task_id must be valid UTF-8 of at most 128 bytes');
  const limit = input.limit === undefined || input.limit === 0 ? TIMELINE_DEFAULT_LIMIT : input.limit;
  if (limit > TIMELINE_MAX_LIMIT) throw bad(`limit must not exceed ${TIMELINE_MAX_LIMIT}`);
  const afterCursor = input.after_cursor ?? '';
  return { taskId, after: parseTimelineCursor(afterCursor), afterCursor, limit };
}

/**
 * One page after the query's cursor, oldest first. `next_cursor` is the last returned sequence (or
 * the input cursor's); `truncated` says retention dropped events the caller has not seen.
 */
export function buildTimelinePage(snapshot: TimelineSnapshot, query: TimelineQuery): TaskTimelinePage {
  if (query.after > snapshot.latestSequence) throw bad('after_cursor exceeds task timeline');
  const records = [...snapshot.records].sort((a, b) => a.sequence - b.sequence);
  const events: TaskTimelineEvent[] = [];
  let more = false;
  let last = query.after;
  for (const record of records) {
    if (record.sequence <= query.after) continue;
    if (events.length === query.limit) {
      more = true;
      break;
    }
    events.push(withCursor(record));
    last = record.sequence;
  }
  // Member order as the reference writes it: the optional status sits between task_id and events.
  const page: Partial<TaskTimelinePage> = { contract_version: TASK_TIMELINE_CONTRACT_VERSION, task_id: query.taskId };
  if (snapshot.status !== '') page.status = snapshot.status;
  page.events = events;
  page.next_cursor = formatTimelineCursor(last);
  page.more = more;
  page.truncated = snapshot.truncatedBefore !== 0 && query.after < snapshot.truncatedBefore;
  return page as TaskTimelinePage;
}

/** Inserts `cursor` right after `event_id`, where the reference's Event declares it. */
function withCursor(record: TimelineRecord): TaskTimelineEvent {
  const { event_id, ...rest } = record.event;
  return { event_id, cursor: formatTimelineCursor(record.sequence), ...rest } as TaskTimelineEvent;
}
