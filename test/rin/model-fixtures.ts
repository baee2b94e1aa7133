// What the rin model tests share (model.test.ts, model-wire.test.ts): the RinError a call throws, and the
// epoch and host manifest of the reference's host tests (its host/action_test.go and manifest_test.go).
import { RinError, type Epoch, type HostManifest } from '../../ts/rin/index.js';

/** The RinError a call throws. */
export function fault(f: () => unknown): RinError {
  try {
    f();
  } catch (e) {
    if (e instanceof RinError) return e;
    throw e;
  }
  throw new Error('expected a RinError, nothing was thrown');
}

export const epoch = (): Epoch => ({ session_id: 'session.test', world_id: 'world.test', host: 1, world: 2, timeline: 3 });

export const manifest = (): HostManifest => ({
  contract_version: 'rin.host/v2',
  adapter_id: 'rin.test',
  adapter_version: '1.0.0',
  engine_id: 'test',
  engine_version: '1',
  runtime: 'go',
  platform: 'windows',
  headless: true,
  authority: 'server',
  deployment: 'dedicated-server',
  control: 'semantic',
  clock_modes: ['step', 'realtime'],
  decision_modes: ['sequential', 'asynchronous'],
  max_concurrent_actors: 100,
  durability: {
    profile: 'advisory',
    stable_identity: true,
    durable_before_network: false,
    durable_outbox: false,
    idempotent_apply: false,
    atomic_apply_and_outbox: false,
  },
});
