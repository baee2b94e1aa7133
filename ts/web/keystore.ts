/**
 * The page's identity and its finished sessions, kept in IndexedDB. The Ed25519 seed must reach the
 * signer and libp2p's Noise identity as bytes, so it cannot be a non-extractable WebCrypto key itself;
 * it is stored sealed with AES-GCM under a non-extractable key that lives in the same database, so
 * what leaves the browser profile as data (a copied database, a backup) holds no usable seed.
 */
const DB = 'aigenora';
const KEYS = 'keys';
const SESSIONS = 'sessions';

export interface SavedSession {
  sid: string;
  protocol: string;
  reason: string;
  completed: boolean;
  transcript: string;
  spec: string;
  receipt: string | null;
  saved_at: string;
}

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error('IndexedDB request failed'));
  });
}

let opened: Promise<IDBDatabase> | undefined;
function db(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const r = indexedDB.open(DB, 1);
    r.onupgradeneeded = () => {
      r.result.createObjectStore(KEYS);
      r.result.createObjectStore(SESSIONS, { keyPath: 'sid' });
    };
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error('cannot open IndexedDB'));
  });
  return opened;
}

async function get<T>(store: string, key: IDBValidKey): Promise<T | undefined> {
  return (await request((await db()).transaction(store).objectStore(store).get(key))) as T | undefined;
}

async function put(store: string, value: unknown, key?: IDBValidKey): Promise<void> {
  const tx = (await db()).transaction(store, 'readwrite');
  await request(tx.objectStore(store).put(value, key));
}

interface SealedSeed {
  wrapKey: CryptoKey;
  iv: Uint8Array<ArrayBuffer>;
  sealed: ArrayBuffer;
}

/** This browser profile's agent seed: made once with the platform's random source, then reused. */
export async function pageSeed(): Promise<Uint8Array> {
  const found = await get<SealedSeed>(KEYS, 'identity');
  if (found) return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: found.iv }, found.wrapKey, found.sealed));
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const wrapKey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, wrapKey, seed);
  await put(KEYS, { wrapKey, iv, sealed } satisfies SealedSeed, 'identity');
  return seed;
}

export async function saveSession(s: SavedSession): Promise<void> {
  await put(SESSIONS, s);
}

export async function loadSession(sid: string): Promise<SavedSession | undefined> {
  return get<SavedSession>(SESSIONS, sid);
}
