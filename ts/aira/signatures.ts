/**
 * Compact step signatures (M20): the plan steps a capsule's selected capabilities accept, as one short
 * TypeScript declaration instead of JSON-Schema ASTs. Generated from the described contracts' input
 * schemas, so it is a view of the one contract, never a second one; the authority still validates
 * every argument against the full schema (plan-check.ts).
 *
 * The output is bounded: schemas are rendered to a fixed depth and breadth, and a selection that
 * would exceed `maxBytes` degrades its last capabilities to `Record<string,unknown>` arguments and
 * then to a count, pointing the model at `catalog.describe` for the full schema (M21).
 */
import type { CapabilityContract } from './authority.js';

/** Upper bound of the whole declaration for any selection (the doc catalog needs well under 1.5 KB). */
export const SIGNATURES_MAX_BYTES = 4096;

const MAX_DEPTH = 4;
const MAX_MEMBERS = 24;
const MAX_LITERALS = 12;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function literal(v: unknown): string {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return JSON.stringify(v);
  return 'unknown';
}

function union(parts: string[]): string {
  const uniq = [...new Set(parts)];
  if (uniq.includes('unknown')) return 'unknown';
  return uniq.length === 0 ? 'never' : uniq.join('|');
}

/** One JSON Schema (2020-12 subset) as a TypeScript type; anything unrendered is `unknown`. */
export function schemaToTs(schema: unknown, depth = 0): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObj(schema) || depth > MAX_DEPTH) return 'unknown';
  if ('const' in schema) return literal(schema['const']);
  const en = schema['enum'];
  if (Array.isArray(en) && en.length > 0 && en.length <= MAX_LITERALS) return union(en.map(literal));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = schema[key];
    if (Array.isArray(alts) && alts.length > 0) {
      return alts.length > MAX_LITERALS ? 'unknown' : union(alts.map((a) => wrap(schemaToTs(a, depth + 1))));
    }
  }
  const t = schema['type'];
  const types = Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : typeof t === 'string' ? [t] : [];
  if (types.length === 0) {
    if (isObj(schema['properties'])) types.push('object');
    else if ('items' in schema || 'prefixItems' in schema) types.push('array');
    else return 'unknown';
  }
  return union(types.map((ty) => typeOf(ty, schema, depth)));
}

function wrap(ts: string): string {
  return ts.includes('|') || ts.includes('&') ? `(${ts})` : ts;
}

function typeOf(ty: string, schema: Json, depth: number): string {
  switch (ty) {
    case 'string':
    case 'boolean':
    case 'null':
      return ty;
    case 'number':
    case 'integer':
      return 'number';
    case 'array': {
      const prefix = schema['prefixItems'];
      if (Array.isArray(prefix) && prefix.length <= MAX_LITERALS && schema['items'] === false) {
        return `[${prefix.map((p) => schemaToTs(p, depth + 1)).join(',')}]`;
      }
      return `${wrap(schemaToTs(schema['items'], depth + 1))}[]`;
    }
    case 'object': {
      const props = isObj(schema['properties']) ? Object.entries(schema['properties']) : [];
      const additional = schema['additionalProperties'];
      if (props.length === 0) return isObj(additional) ? `Record<string,${schemaToTs(additional, depth + 1)}>` : 'Record<string,unknown>';
      if (props.length > MAX_MEMBERS) return 'Record<string,unknown>';
      const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : []);
      const members = props.map(([k, v]) => `${IDENT.test(k) ? k : JSON.stringify(k)}${required.has(k) ? '' : '?'}:${schemaToTs(v, depth + 1)}`);
      return `{${members.join(';')}}`;
    }
    default:
      return 'unknown';
  }
}

const bytes = (s: string): number => new TextEncoder().encode(s).length;

/**
 * The `Step` type for these contracts, in their order. Each alternative pins capability, mode and
 * argument type; a trailing comment gives risk and irreversibility, which the plan must not hide.
 */
export function compactStepSignatures(contracts: readonly CapabilityContract[], maxBytes: number = SIGNATURES_MAX_BYTES): string {
  const head = 'type Step={id:string;dependsOn?:string[]}&(\n';
  const tail = ');';
  const line = (c: CapabilityContract, args: string): string =>
    `|{capability:${JSON.stringify(c.id)};mode:${JSON.stringify(c.mode)};args:${args}}//${c.risk}${c.reversible ? '' : ',irreversible'}\n`;
  const full = contracts.map((c) => line(c, schemaToTs(c.inputSchema)));
  const total = (ls: string[], more: number): number =>
    bytes(head) + bytes(tail) + ls.reduce((n, l) => n + bytes(l), 0) + (more > 0 ? bytes(moreNote(more)) : 0);
  // Degrade from the end: first the argument types, then whole lines.
  for (let i = full.length - 1; i >= 0 && total(full, 0) > maxBytes; i--) full[i] = line(contracts[i]!, 'Record<string,unknown>');
  let kept = full.length;
  while (kept > 0 && total(full.slice(0, kept), full.length - kept) > maxBytes) kept--;
  const more = full.length - kept;
  return head + full.slice(0, kept).join('') + (more > 0 ? moreNote(more) : '') + tail;
}

function moreNote(n: number): string {
  return `//+${n} more capabilities: catalog.describe for their args\n`;
}
