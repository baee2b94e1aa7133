/**
 * The trade state machine of agent-trade/0.2 §4 (NOTES B4): fold verified TRADE_EVENTs, in order,
 * into the trade's state, refusing every transition the table does not allow. A dispute remembers the
 * state it interrupted and RESOLVED returns there; COMPLETED and CANCELLED are terminal.
 */
export const TRADE_STATES = [
  'AGREED',
  'PAYMENT_PENDING',
  'PAYMENT_CONFIRMED',
  'FULFILLING',
  'SHIPPED',
  'DELIVERED',
  'COMPLETED',
  'DISPUTED',
  'RESOLVED',
  'CANCELLED',
] as const;
export type TradeState = (typeof TRADE_STATES)[number];
export type EventType =
  | 'DEAL_SIGNED'
  | 'PAYMENT_REQUESTED'
  | 'PAYMENT_CONFIRMED'
  | 'ESCROWED'
  | 'FULFILLING'
  | 'SHIPPED'
  | 'DELIVERED'
  | 'COMPLETED'
  | 'DISPUTED'
  | 'RESOLVED'
  | 'CANCELLED';

const FORWARD: Partial<Record<EventType, [TradeState, TradeState]>> = {
  PAYMENT_REQUESTED: ['AGREED', 'PAYMENT_PENDING'],
  PAYMENT_CONFIRMED: ['PAYMENT_PENDING', 'PAYMENT_CONFIRMED'],
  ESCROWED: ['PAYMENT_PENDING', 'PAYMENT_CONFIRMED'],
  FULFILLING: ['PAYMENT_CONFIRMED', 'FULFILLING'],
  SHIPPED: ['FULFILLING', 'SHIPPED'],
  DELIVERED: ['SHIPPED', 'DELIVERED'],
  COMPLETED: ['DELIVERED', 'COMPLETED'],
};
const TERMINAL = new Set<TradeState>(['COMPLETED', 'CANCELLED']);

export interface Trade {
  /** null before the first event. */
  state: TradeState | null;
  /** The state a dispute interrupted, while disputed. */
  beforeDispute?: TradeState;
}

export type Step = { ok: true; trade: Trade } | { ok: false; reason: string };

export function applyEvent(t: Trade, event: EventType | string): Step {
  const { state } = t;
  const refuse = (why: string): Step => ({ ok: false, reason: `${event} is not allowed ${state ? `in state ${state}` : 'as the first event'}: ${why}` });
  if (state === null) return event === 'DEAL_SIGNED' ? { ok: true, trade: { state: 'AGREED' } } : refuse('a trade starts with DEAL_SIGNED');
  if (TERMINAL.has(state)) return refuse(`${state} is terminal`);
  switch (event) {
    case 'DEAL_SIGNED':
      return refuse('DEAL_SIGNED only opens a trade');
    case 'DISPUTED':
      return { ok: true, trade: { state: 'DISPUTED', beforeDispute: state === 'DISPUTED' ? t.beforeDispute! : state } };
    case 'RESOLVED':
      if (state !== 'DISPUTED' || !t.beforeDispute) return refuse('only a dispute can be resolved');
      return { ok: true, trade: { state: t.beforeDispute } };
    case 'CANCELLED':
      return { ok: true, trade: { state: 'CANCELLED' } };
  }
  const edge = FORWARD[event as EventType];
  if (!edge) return refuse('unknown event type');
  if (state !== edge[0]) return refuse(`${event} follows ${edge[0]} (no skipping steps)`);
  return { ok: true, trade: { state: edge[1] } };
}

export type Fold = { ok: true; trade: Trade; applied: number } | { ok: false; trade: Trade; applied: number; rejectedAt: number; reason: string };

/**
 * Folds event types in order; stops at the first refused one, reporting its index and reason.
 *
 * @param events - TRADE_EVENT event_types, oldest first (verify each envelope before folding it)
 * @param start - the trade before the first event; no state yet by default
 * @example
 * ```ts
 * foldEvents(['DEAL_SIGNED', 'PAYMENT_REQUESTED', 'PAYMENT_CONFIRMED']); // { ok: true, trade: { state: 'PAYMENT_CONFIRMED' }, applied: 3 }
 * foldEvents(['DEAL_SIGNED', 'COMPLETED']).ok; // false, rejectedAt 1: no skipping steps
 * ```
 */
export function foldEvents(events: readonly string[], start: Trade = { state: null }): Fold {
  let trade = start;
  for (const [i, ev] of events.entries()) {
    const s = applyEvent(trade, ev);
    if (!s.ok) return { ok: false, trade, applied: i, rejectedAt: i, reason: s.reason };
    trade = s.trade;
  }
  return { ok: true, trade, applied: events.length };
}
