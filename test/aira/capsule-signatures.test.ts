// Compact step signatures (M20): a bounded TypeScript view of the selected contracts' argument schemas.
import { describe, expect, it } from 'vitest';
import type { CapabilityContract } from '../../ts/aira/authority.js';
import { DOC_CAPABILITIES } from '../../ts/aira/doc/catalog.js';
import { compactStepSignatures, schemaToTs, SIGNATURES_MAX_BYTES } from '../../ts/aira/signatures.js';
import { docContracts } from './capsule-fixtures.js';

const size = (s: string) => new TextEncoder().encode(s).length;

describe('schemaToTs', () => {
  it('renders the JSON Schema forms a contract uses', () => {
    const cases: Array<[unknown, string]> = [
      [{ type: 'string' }, 'string'],
      [{ type: 'integer' }, 'number'],
      [{ type: ['string', 'null'] }, 'string|null'],
      [{ const: 'x' }, '"x"'],
      [{ enum: ['a', 1, true, null] }, '"a"|1|true|null'],
      [{ oneOf: [{ type: 'number' }, { type: 'string', maxLength: 5 }, { type: 'boolean' }] }, 'number|string|boolean'],
      [{ type: 'array', items: { type: 'string' } }, 'string[]'],
      [{ type: 'array', items: { enum: ['a', 'b'] } }, '("a"|"b")[]'],
      [{ type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], items: false }, '[number,string]'],
      [{ type: 'object', required: ['a'], properties: { a: { type: 'number' }, 'b-c': { type: 'boolean' } } }, '{a:number;"b-c"?:boolean}'],
      [{ type: 'object' }, 'Record<string,unknown>'],
      [{ type: 'object', additionalProperties: { type: 'number' } }, 'Record<string,number>'],
      [{ $ref: '#/$defs/x' }, 'unknown'],
      [{}, 'unknown'],
      [true, 'unknown'],
      [false, 'never'],
      [{ enum: Array.from({ length: 13 }, (_, i) => i), type: 'integer' }, 'number'],
    ];
    for (const [schema, ts] of cases) expect(schemaToTs(schema), JSON.stringify(schema)).toBe(ts);
  });

  it('stops at a fixed depth and breadth', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 50; i++) deep = { type: 'object', required: ['x'], properties: { x: deep } };
    expect(schemaToTs(deep)).toBe('{x:{x:{x:{x:{x:unknown}}}}}');
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(schemaToTs(wide)).toBe('Record<string,unknown>');
  });
});

describe('compactStepSignatures', () => {
  it('the document catalog (ts/aira/doc) fits in 1.5 KB and names every capability with its mode', () => {
    const text = compactStepSignatures(DOC_CAPABILITIES);
    expect(size(text)).toBeLessThanOrEqual(1536);
    for (const c of DOC_CAPABILITIES) expect(text).toContain(`{capability:"${c.id}";mode:"${c.mode}";args:`);
    expect(text).toContain('args:{name:string;value:number|string|boolean}');
    expect(text).not.toContain('more capabilities');
  });

  it('renders the fixture contracts exactly', () => {
    const text = compactStepSignatures(docContracts().slice(0, 2));
    expect(text).toBe(
      'type Step={id:string;dependsOn?:string[]}&(\n' +
        '|{capability:"cap:doc.setParameter@1";mode:"authoring";args:{name:string;value:number|string|boolean}}//low\n' +
        '|{capability:"cap:doc.addParameter@1";mode:"authoring";args:{name:string;value:number|string|boolean;unit?:string}}//low\n' +
        ');',
    );
  });

  it('marks irreversible capabilities', () => {
    const c: CapabilityContract = { ...docContracts()[4]!, reversible: false };
    expect(compactStepSignatures([c])).toContain('//high,irreversible');
  });

  it('stays under its bound for large selections: argument types degrade first, then lines become a count', () => {
    const big = (i: number): CapabilityContract => ({
      ...docContracts()[0]!,
      id: `cap:big.op${i}@1`,
      inputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`field_${j}`, { type: 'string' }])) },
    });
    const text = compactStepSignatures(Array.from({ length: 20 }, (_, i) => big(i)));
    expect(size(text)).toBeLessThanOrEqual(SIGNATURES_MAX_BYTES);
    expect(text).toContain('"cap:big.op0@1";mode:"authoring";args:{field_0?:string;');
    expect(text).toContain('"cap:big.op19@1";mode:"authoring";args:Record<string,unknown>}');
    const small = compactStepSignatures(
      Array.from({ length: 20 }, (_, i) => big(i)),
      600,
    );
    expect(size(small)).toBeLessThanOrEqual(600);
    expect(small).toMatch(/\/\/\+\d+ more capabilities: catalog\.describe for their args\n\);$/);
    expect(compactStepSignatures([])).toBe('type Step={id:string;dependsOn?:string[]}&(\n);');
  });
});
