/**
 * @module lib/defined — `definedOnly`: an object without its undefined fields, for the few objects
 * whose keys are observable (written as JSON and compared by key, stored, read with `in`); objects
 * used in-process simply carry `x: undefined`.
 */

/** The object without the keys whose value is undefined (a shallow copy). */
export function definedOnly<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}
