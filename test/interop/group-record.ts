// Prints the registry's record of the group a post opened (`RESULT {…}`), read with our registry client
// by one of the test's registered identities; the test process itself cannot reach into the namespace.
import { getCrypto } from '../../ts/crypto/index.js';
import { loadIdentity } from '../../ts/library/identity.js';
import { RegistryClient } from '../../ts/registry/client.js';

const [server, dataDir, postId] = process.argv.slice(2) as [string, string, string];
const c = getCrypto();
const client = new RegistryClient(server, loadIdentity(c, dataDir).seed, c);
const g = await client.request('GET', `/api/v1/groups/by-post/${postId}`);
process.stdout.write(`RESULT ${JSON.stringify(g.body)}\n`);
