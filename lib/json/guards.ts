/**
 * @module lib/json/guards — the one vocabulary every parser of incoming JSON checks shapes with:
 * plain object, bounded string, count, boolean, list of, optional, one of. A guard returns the
 * value typed, or throws a `ShapeError` naming the path of the offending field
 * (`params.message.parts[2].text`); each parser turns that into its own coded error at its
 * boundary, so the guards import nothing and sit on the lowest floor.
 */

export type JsonObject = Record<string, unknown>;

/** Checks `v` at `path`: returns it typed, or throws a `ShapeError` naming `path`. */
export type Guard<T> = (v: unknown, path: string) => T;

/** A value of the wrong shape; `path` names the field, `message` says what it must be. */
export class ShapeError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** A JSON object: not null, not an array. */
export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The path of member `name` of the value at `path` (the root has the empty path). */
export const pathOf = (path: string, name: string | number): string =>
  typeof name === 'number' ? `${path}[${name}]` : path ? `${path}.${name}` : name;

export const plainObject: Guard<JsonObject> = (v, path) => {
  if (!isPlainObject(v)) throw new ShapeError(path, `${path} must be an object`);
  return v;
};

/**
 * A string of at most `max` characters; the empty string only with `empty: true`. A missing or
 * empty value that must not be is "required" in the message, as the A2A parsers have always said.
 */
export function boundedString(max = 1024, opts: { empty?: boolean } = {}): Guard<string> {
  return (v, path) => {
    if (typeof v !== 'string' || (v === '' && !opts.empty))
      throw new ShapeError(
        path,
        typeof v !== 'string' && opts.empty
          ? `${path} must be a string`
          : `${path} is required and must be a non-empty string`,
      );
    if (v.length > max) throw new ShapeError(path, `${path} is longer than ${max} characters`);
    return v;
  };
}

/** An integer between `min` and `max` (a count when `min` is 0, the default). */
export function count(max: number, min = 0): Guard<number> {
  return (v, path) => {
    if (typeof v !== 'number' || !Number.isInteger(v))
      throw new ShapeError(path, `${path} must be an integer`);
    if (v < min || v > max) throw new ShapeError(path, `${path} must be between ${min} and ${max}`);
    return v;
  };
}

export const boolean: Guard<boolean> = (v, path) => {
  if (typeof v !== 'boolean') throw new ShapeError(path, `${path} must be a boolean`);
  return v;
};

/** A list of at most `max` items (at least one with `nonEmpty`), each checked at `path[i]`. */
export function listOf<T>(item: Guard<T>, max: number, opts: { nonEmpty?: boolean } = {}) {
  return ((v, path) => {
    if (!Array.isArray(v) || (opts.nonEmpty && v.length === 0))
      throw new ShapeError(
        path,
        opts.nonEmpty
          ? `${path} is required and must be a non-empty array`
          : `${path} must be an array`,
      );
    if (v.length > max) throw new ShapeError(path, `${path} has more than ${max} items`);
    return v.map((x, i) => item(x, pathOf(path, i)));
  }) as Guard<T[]>;
}

/** `guard`, except that an absent value (undefined or null, as JSON writers differ) is undefined. */
export function optional<T>(guard: Guard<T>): Guard<T | undefined> {
  return (v, path) => (v === undefined || v === null ? undefined : guard(v, path));
}

/** One of the listed values. */
export function oneOf<const T extends string | number>(values: readonly T[]): Guard<T> {
  return (v, path) => {
    if (!values.includes(v as T))
      throw new ShapeError(path, `${path} must be one of ${values.join(', ')}`);
    return v as T;
  };
}

/** Member `name` of `o` checked by `guard` at its own path. */
export function member<T>(o: JsonObject, name: string, path: string, guard: Guard<T>): T {
  return guard(o[name], pathOf(path, name));
}

/** Runs `parse`; a `ShapeError` comes back as a value, other throws stay throws (bugs). */
export function checkShape<T>(
  parse: () => T,
): { ok: true; value: T } | { ok: false; path: string; message: string } {
  try {
    return { ok: true, value: parse() };
  } catch (e) {
    if (e instanceof ShapeError) return { ok: false, path: e.path, message: e.message };
    throw e;
  }
}
