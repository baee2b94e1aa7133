/**
 * What the host agent publishes: each world with its actors' state, observations and capabilities,
 * a world sent again (with its sequence +1) only when what it would publish changed.
 */
import { goJsonEncode, RawJson } from '../crypto/gojson.js';
import type { AdapterCoordinator } from './hostkit/coordinator.js';
import type { HostWorldSource } from './hostkit/adapter.js';
import type { ActorPublication, WorldPublication } from './types.js';

export class WorldPublisher {
  private sequence: number;
  private readonly published = new Map<string, string>();
  /** The change signal every world was last published (or found unchanged) at. */
  private publishedVersion: string | undefined;

  constructor(
    private readonly coordinator: AdapterCoordinator,
    private readonly world: HostWorldSource,
    private readonly hostId: string,
    /** Seeds the sequence from the clock, so a restarted agent publishes above what the control plane kept of it. */
    now: number,
    /** Sends one publication to the control plane. */
    private readonly send: (publication: WorldPublication) => Promise<void>,
  ) {
    this.sequence = now;
  }

  /** After a new registration the control plane knows no world: each is published again. */
  reset(): void {
    this.published.clear();
    this.publishedVersion = undefined;
  }

  /** Publishes every world whose content changed since its last publication (sequence +1). */
  async publish(): Promise<void> {
    // Read before building: a change while building moves it again, so nothing is skipped wrongly.
    const version = await this.publicationVersion();
    if (version !== undefined && version === this.publishedVersion) return;
    for (const publication of await this.build()) {
      const content = goJsonEncode(publication);
      if (this.published.get(publication.world_id) === content) continue;
      this.sequence += 1;
      publication.sequence = this.sequence;
      await this.send(publication);
      this.published.set(publication.world_id, content);
    }
    this.publishedVersion = version;
  }

  /** The world's change signal and the catalog revision, when the world offers one. */
  private async publicationVersion(): Promise<string | undefined> {
    const world = this.world;
    if (world.publicationVersion === undefined) return undefined;
    const version = await this.coordinator.dispatcher.dispatch(() => world.publicationVersion!());
    return `${version}\0${this.coordinator.capabilities().revision}`;
  }

  private async build(): Promise<WorldPublication[]> {
    const { coordinator, world, hostId } = this;
    const dispatcher = coordinator.dispatcher;
    const worlds = await dispatcher.dispatch(() => world.describe());
    const capabilities = coordinator.capabilities();
    const out: WorldPublication[] = [];
    for (const w of worlds) {
      const actors: ActorPublication[] = [];
      for (const actor of w.actors) {
        const target = { host_id: hostId, world_id: w.world_id, actor_id: actor.actor_id };
        const snapshot = await coordinator.snapshotAction(target);
        const observation = await coordinator.observe({
          query_id: `query.${actor.actor_id}.${snapshot.observation_sequence}`,
          host_id: hostId,
          world_id: w.world_id,
          actor_id: actor.actor_id,
          expected_epoch: snapshot.epoch,
          limit: 64,
        });
        const state = await dispatcher.dispatch(() => world.actorState(actor.actor_id));
        actors.push({
          actor_id: actor.actor_id,
          owner_principal_id: actor.owner_principal_id,
          display_name: actor.display_name,
          observation_seq: observation.sequence,
          epoch: observation.epoch,
          decision_authority: actor.decision_authority,
          state: new RawJson(goJsonEncode(state)),
          observation,
          capabilities,
        });
      }
      out.push({
        world_id: w.world_id,
        display_name: w.display_name,
        sequence: 0,
        ...(w.visible_principal_ids && w.visible_principal_ids.length > 0 ? { visible_principal_ids: w.visible_principal_ids } : {}),
        actors,
      });
    }
    return out;
  }
}
