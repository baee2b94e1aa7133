/**
 * A defensive deep copy of wire-shaped values: plain objects and arrays are copied, immutable class
 * instances (RawJson) are shared. structuredClone would turn a RawJson into a plain object, which the
 * Go-JSON encoder would then no longer write verbatim.
 */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => clone(item)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = clone(item);
    return out as T;
  }
  return value;
}
