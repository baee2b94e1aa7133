/**
 * The four JSON Schemas (2020-12) of agent-trade/0.2, compiled once with ajv + ajv-formats. They
 * cover the whole envelope, closed at every level (NOTES B3); the reference's copies are the check
 * (test/trade/schemas.test.ts), these files the source.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import deal from './schemas/deal.schema.json' with { type: 'json' };
import listingRef from './schemas/listing-ref.schema.json' with { type: 'json' };
import tradeEvent from './schemas/trade-event.schema.json' with { type: 'json' };
import tradeReceipt from './schemas/trade-receipt.schema.json' with { type: 'json' };
import { isPlainDateTime } from './date-time.js';
import type { ObjectType } from './envelope.js';

export const SCHEMAS: Record<ObjectType, object> = {
  LISTING_REF: listingRef,
  DEAL: deal,
  TRADE_EVENT: tradeEvent,
  TRADE_RECEIPT: tradeReceipt,
};

let compiled: Record<ObjectType, ValidateFunction> | undefined;

function validators(): Record<ObjectType, ValidateFunction> {
  if (!compiled) {
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    (addFormats as unknown as (a: Ajv2020, f: string[]) => void)(ajv, ['date-time']);
    const full = ajv.formats['date-time'] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };
    ajv.addFormat('date-time', { ...full, validate: (s: string) => isPlainDateTime(s) || full.validate(s) });
    compiled = {
      LISTING_REF: ajv.compile(listingRef),
      DEAL: ajv.compile(deal),
      TRADE_EVENT: ajv.compile(tradeEvent),
      TRADE_RECEIPT: ajv.compile(tradeReceipt),
    };
  }
  return compiled;
}

/** The first schema error, as "<JSON pointer> <message>", or undefined when the envelope is valid. */
export function schemaError(objectType: ObjectType, envelope: unknown): string | undefined {
  const validate = validators()[objectType];
  if (validate(envelope)) return undefined;
  const e = validate.errors?.[0] as ErrorObject | undefined;
  if (!e) return 'invalid';
  const extra = e.keyword === 'additionalProperties' ? ` (${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)})` : '';
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
}
