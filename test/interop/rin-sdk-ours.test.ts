/**
 * The reference JS SDK (imported unmodified from ../shared) against OUR control daemon, with our
 * built-in world attached through our host agent: one whole task — acquire the controller, observe,
 * list and describe the capabilities, submit an action the guarded policy sends to confirmation,
 * confirm, wait for the outcome, read the task timeline — judged by the same checks as the run against
 * the reference daemon (rin-go-daemon.test.ts). The daemon runs in this process on 127.0.0.1 with an
 * in-memory database; test/rin/cli-rin.test.ts runs it as `aigenora rin serve`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ServedRinControl } from '../../ts/rin/control/service.js';
import { attachHarbor, describeWithReference, expectWholeTask, serveOurDaemon, type AttachedHarbor } from './rin-harness.js';

describeWithReference('the reference SDK against our control daemon with our world attached', () => {
  let served: ServedRinControl;
  let attached: AttachedHarbor | undefined;
  const log: string[] = [];

  beforeAll(async () => {
    served = await serveOurDaemon(log);
    attached = await attachHarbor(served.url);
  });
  afterAll(async () => {
    await attached?.stop();
    await served?.close();
  });

  it('completes a whole task for the reference SDK', async () => {
    await expectWholeTask(served.url, attached!, 'task.ours-repair', () => log.join('\n'), expect);
  });
});
