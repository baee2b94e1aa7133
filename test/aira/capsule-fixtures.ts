// Fixtures shared by the capsule, signatures and plan-check tests: a bracket intent frame and capability
// contracts shaped like the document authority's catalog (written here, independent of ts/aira/doc).
import type { CapabilityContract } from '../../ts/aira/authority.js';
import type { IntentFrame } from '../../ts/aira/schema.js';

export const ZERO = '0'.repeat(64);

export function bracketIntent(): IntentFrame {
  return {
    goal: 'Widen the bracket to 45 mm without thinning the wall',
    hardRequirements: [{ id: 'width', text: 'width 45 mm' }],
    softPreferences: [],
    scope: [{ id: 'bracket', text: 'the bracket' }],
    prohibitedEffects: [{ id: 'wall', text: 'do not thin the wall' }],
    assumptions: [],
    unknowns: [],
    acceptanceAssertions: [{ id: 'width-45', text: 'width is 45', validator: 'param.equals', args: { name: 'width', value: 45 } }],
  };
}

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const NAME = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' };
const VALUE = { oneOf: [{ type: 'number' }, { type: 'string', maxLength: 200 }, { type: 'boolean' }] };
const closed = (required: string[], properties: Record<string, unknown>) => ({
  $schema: DIALECT,
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});

function cap(short: string, risk: CapabilityContract['risk'], mode: 'query' | 'authoring', inputSchema: Record<string, unknown>): CapabilityContract {
  return {
    id: `cap:doc.${short}@1`,
    title: short,
    effectClass: mode === 'query' ? 'read' : 'reversible',
    risk,
    description: `${short} (fixture)`,
    inputSchema,
    mode,
    reversible: true,
    preconditions: [],
  };
}

/** The six capabilities of the planned doc catalog `aira.doc.ops/1`. */
export function docContracts(): CapabilityContract[] {
  return [
    cap('setParameter', 'low', 'authoring', closed(['name', 'value'], { name: NAME, value: VALUE })),
    cap('addParameter', 'low', 'authoring', closed(['name', 'value'], { name: NAME, value: VALUE, unit: { type: 'string', maxLength: 32 } })),
    cap('removeParameter', 'medium', 'authoring', closed(['name'], { name: NAME })),
    cap(
      'addAssertion',
      'low',
      'authoring',
      closed(['id', 'validator', 'args'], {
        id: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' },
        validator: { enum: ['param.exists', 'param.range', 'param.equals', 'param.type'] },
        args: { type: 'object' },
      }),
    ),
    cap('removeAssertion', 'high', 'authoring', closed(['id'], { id: { type: 'string' } })),
    cap('inspect', 'low', 'query', closed(['select'], { select: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 200 } } })),
  ];
}
