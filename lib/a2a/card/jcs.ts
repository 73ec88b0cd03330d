/**
 * @module lib/a2a/card/jcs — the JSON Canonicalization Scheme (RFC 8785): object members sorted by the
 * UTF-16 code units of their names, no insignificant whitespace, numbers in ECMAScript's
 * Number::toString form, strings as literal UTF-8 with only the mandatory escapes. Signed agent
 * cards (lib/a2a/card/signature.ts) are signed over this form.
 */

/** Why a value has no canonical form (RFC 8785 §3.2.2: not I-JSON). */
export class JcsError extends Error {}

// A lone surrogate is not Unicode text and has no UTF-8 form (RFC 8785 §3.2.2.2, RFC 7493 §2.1).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function string(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new JcsError('a string holds a lone surrogate');
  // JSON.stringify escapes exactly RFC 8785's set for well-formed text: ", \, and U+0000–U+001F
  // (\b \t \n \f \r short, the rest as lower-case \u00xx).
  return JSON.stringify(s);
}

/**
 * The canonical text of a JSON value. Depth is bounded by the caller's input (cards are parsed
 * from bounded bodies).
 * @throws JcsError for a value JSON cannot carry canonically: a non-finite number, a lone
 * surrogate, or something that is not JSON (undefined, a function, a bigint, a symbol).
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new JcsError('a number is NaN or infinite');
      // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires; -0 prints as 0.
      return JSON.stringify(value);
    case 'string':
      return string(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const record = value as Record<string, unknown>;
      // The default sort compares UTF-16 code units, which is RFC 8785 §3.2.3's order.
      const keys = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${string(k)}:${canonicalJson(record[k])}`).join(',')}}`;
    }
    default:
      throw new JcsError(`a ${typeof value} is not JSON`);
  }
}
