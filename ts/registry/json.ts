/**
 * JSON exactly as the reference client writes request bodies and stored specs: Python's
 * `json.dumps(ensure_ascii=False, separators=(",", ":"))`, keys in their given order. A spec travels as
 * a parsed tree with its number literals kept, so `1.0` stays a float as Python reads it and the
 * protocol_id the server recomputes is the one we computed.
 */
import { Entries, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import { pythonFloatRepr } from '../spec/protocol-id.js';

export function compactJson(node: JsonNode): string {
  if (node === null) return 'null';
  if (node === true) return 'true';
  if (node === false) return 'false';
  if (node instanceof RawNumber) return node.isInteger ? BigInt(node.text).toString() : pythonFloatRepr(Number(node.text));
  if (typeof node === 'number') return Number.isInteger(node) ? String(node) : pythonFloatRepr(node);
  if (typeof node === 'string') return JSON.stringify(node);
  if (Array.isArray(node)) return `[${node.map(compactJson).join(',')}]`;
  return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}:${compactJson(v)}`).join(',')}}`;
}

/** A value already serialised, placed into a request body verbatim. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A request body: plain values via JSON.stringify (same bytes as Python for strings, integers, objects), RawJson verbatim. */
export function encodeBody(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof Entries || value instanceof RawNumber) return compactJson(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const parts = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${encodeBody(v)}`);
    return `{${parts.join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(encodeBody).join(',')}]`;
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
  return text;
}

/** Lossless parse (number literals kept) for text that will be hashed or stored again. */
export const parseTree = (text: string): JsonNode => parseJson(text, { rawNumbers: true });

export function member(node: JsonNode, key: string): JsonNode | undefined {
  return node instanceof Entries ? node.entries.find(([k]) => k === key)?.[1] : undefined;
}
