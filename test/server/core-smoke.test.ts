import { expect, it } from 'vitest';
import { describeDbs } from './harness.js';

describeDbs("registry smoke", (server) => {
  it('registers, answers a signed call and refuses an unsigned one', async () => {
    const t = server();
    const a = await t.registered('alice');
    const browse = await a.json('GET', '/api/v1/invitations');
    expect(browse.status).toBe(200);
    expect(browse.body['results']).toEqual([]);
    const unsigned = await t.fetch('/api/v1/invitations');
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ code: 'AUTH_MISSING' });
  });
});
