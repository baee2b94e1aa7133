/**
 * What the built-in harbor world declares about its capabilities' effects, written from the world's
 * documented behaviour (its catalog says: inspect, load-cargo, sail and shift are allowed, repair asks
 * for confirmation, tow and scuttle are denied under the harbor policy). The authority compares these
 * with the effects the host actually binds at commit and reports any difference.
 */
import type { IntentFrame } from '../schema.js';
import type { DeclaredEffect, EffectProfile } from './types.js';

const own = (kind: string, operation: DeclaredEffect['operation'], more: Partial<DeclaredEffect> = {}): DeclaredEffect => ({
  kind,
  operation,
  ownership: 'actor',
  scope: 'harbor.public',
  reversible: true,
  risk: 'low',
  ...more,
});

export const HARBOR_EFFECTS: EffectProfile = {
  'harbor.inspect': [own('harbor.survey', 'read')],
  'harbor.load-cargo': [own('harbor.cargo', 'transfer')],
  'harbor.sail': [own('harbor.voyage', 'update')],
  'harbor.repair': [own('harbor.repair', 'update', { ownership: 'shared', scope: 'harbor.slipway', reversible: false, risk: 'moderate' })],
  'harbor.shift': [own('harbor.plan', 'execute')],
  'harbor.tow': [own('harbor.tow', 'transfer', { ownership: 'player', risk: 'high' })],
  'harbor.scuttle': [own('harbor.vessel', 'delete', { reversible: false, risk: 'critical' })],
};

/** A demo task on the harbor: load crates until the actor's boat holds `cargo` of them. */
export function harborLoadTask(cargo = 3): IntentFrame {
  return {
    goal: `Load the boat at the dock until it holds ${cargo} crates`,
    hardRequirements: [{ id: 'stay-docked', text: 'The boat stays at the dock' }],
    softPreferences: [],
    scope: [{ id: 'own-boat', text: "The actor's own boat and the dock's crates" }],
    prohibitedEffects: [{ id: 'no-sinking', text: 'Nothing is scuttled or towed' }],
    assumptions: [],
    unknowns: [],
    acceptanceAssertions: [
      { id: 'cargo-loaded', text: `The boat holds ${cargo} crates`, validator: 'payload.equals', args: { pointer: '/boat/cargo', value: cargo } },
      { id: 'still-docked', text: 'The boat is at the dock', validator: 'payload.equals', args: { pointer: '/boat/berth', value: 'dock' } },
    ],
  };
}
