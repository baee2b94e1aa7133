/**
 * Interop with the reference Rin control daemon (Go, built into .cache by scripts/lib/rin-reference.sh):
 * our built-in world is attached to it through our host agent, and the reference JS SDK (imported
 * unmodified from ../shared) drives one whole task through it: acquire the controller, observe, list
 * and describe the capabilities, submit an action the policy sends to confirmation, confirm, wait for
 * the outcome, read the task timeline. Every byte our host sends is judged by the reference's checks.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';
import { attachHarbor, describeWithReference, expectWholeTask, startGoDaemon, type AttachedHarbor, type Daemon } from './rin-harness.js';

describeWithReference('the reference Go control daemon with our world attached', () => {
  let daemon: Daemon;
  let attached: AttachedHarbor | undefined;

  beforeAll(async () => {
    daemon = await startGoDaemon(tempDir('rin-go-daemon'));
    attached = await attachHarbor(daemon.url);
  });
  afterAll(async () => {
    await attached?.stop();
    await daemon?.stop();
  });

  it('serves the reference SDK a whole task on our world', async () => {
    await expectWholeTask(daemon.url, attached!, 'task.go-repair', () => daemon.output(), expect);
  });
});
