/**
 * Test support: seeded hostile bodies. Each is a valid example of what an endpoint takes, bent one
 * way: random bytes, deep nesting, huge strings, wrong types, `__proto__` / `constructor` keys,
 * odd Unicode, invalid UTF-8, truncation, extreme numbers, duplicate keys, batches. The same seed
 * gives the same bodies, so a finding can be replayed.
 */

export type Rng = () => number;

/** mulberry32: a small seeded generator, good enough to pick mutations. */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const int = (rng: Rng, max: number) => Math.floor(rng() * max);
export const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, items.length)]!;

export interface Hostile {
  kind: string;
  body: string | Uint8Array<ArrayBuffer>;
}

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u202e',
  '\u200b',
  'e\u0301\u0301\u0301\u0301',
  '\ud83d\ude00',
  '𝕏'.repeat(50),
  'ﷺ',
  '../../etc/passwd',
  '%00',
  '..%2F..%2F',
  'C:\\\\Windows',
  '<script>',
  "'; DROP TABLE x; --",
  '\r\nX-Injected: 1',
  '${process.env}',
  '__proto__',
  'constructor',
  'toString',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  'true',
  'null',
  'undefined',
  '[object Object]',
  'a'.repeat(300),
];
/** Raw JSON texts whose value a plain JSON.stringify cannot produce. */
const ODD_LITERALS = [
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"\\u0000"',
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.1e1',
  '"\\uFFFF"',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"__proto__":null}',
  '{"toString":1,"valueOf":"x","hasOwnProperty":false}',
  '[]',
  '{}',
  'null',
  'true',
  'false',
  '""',
  '[[[]]]',
  '{"":""}',
];
const VALUES = (rng: Rng): unknown[] => [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  -(2 ** 63),
  int(rng, 100),
  '',
  'x',
  pick(rng, ODD_STRINGS),
  [],
  {},
  [1, 'a', null],
  { a: { b: [] } },
  'x'.repeat(int(rng, 5000)),
  Array.from({ length: int(rng, 300) }, () => 0),
];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path into a JSON value (objects and arrays), the root included. */
function paths(
  v: Json,
  at: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function setAt(root: Json, at: (string | number)[], value: Json): Json {
  if (!at.length) return value;
  let cur = root as Record<string | number, Json>;
  for (const k of at.slice(0, -1)) cur = cur[k] as Record<string | number, Json>;
  cur[at[at.length - 1]!] = value;
  return root;
}

const clone = (v: Json): Json => JSON.parse(JSON.stringify(v));

function nested(rng: Rng, depth: number, inner: string): string {
  const open = rng() < 0.5 ? '[' : '{"a":';
  const close = open === '[' ? ']' : '}';
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** Serializes `root` with the value at `at` replaced by raw JSON text. */
function withRaw(root: Json, at: (string | number)[], raw: string): string {
  const marker = `__RAW_${Math.random().toString(36).slice(2)}__`;
  return JSON.stringify(setAt(clone(root), at, marker)).replace(`"${marker}"`, raw);
}

const hugeStrings = new Map<string, string>();
/** `char` repeated `size` times, as a JSON string: made once per pair (they are megabytes). */
function hugeString(char: string, size: number): string {
  const key = `${char}:${size}`;
  let made = hugeStrings.get(key);
  if (made === undefined) hugeStrings.set(key, (made = JSON.stringify(char.repeat(size))));
  return made;
}

/** One hostile body derived from one of `templates` (each a valid request for the endpoint). */
export function hostileBody(rng: Rng, templates: readonly unknown[]): Hostile {
  const template = clone(pick(rng, templates) as Json);
  const all = paths(template);
  const at = pick(rng, all);
  const enc = new TextEncoder();
  switch (int(rng, 13)) {
    case 0: {
      const bytes = new Uint8Array(int(rng, 2048));
      for (let i = 0; i < bytes.length; i++) bytes[i] = int(rng, 256);
      return { kind: 'random bytes', body: bytes };
    }
    case 1: {
      const depth = rng() < 0.5 ? 60 + int(rng, 10) : pick(rng, [1000, 5000, 20_000, 45_000]);
      return {
        kind: `deep nesting ${depth}`,
        body: withRaw(template, at, nested(rng, depth, pick(rng, ['1', '"x"', '[]', '{}']))),
      };
    }
    case 2: {
      const size = pick(rng, [10_000, 10_000, 70_000, 70_000, 300_000, 1_100_000]);
      return {
        kind: `huge string ${size}`,
        body: withRaw(template, at, hugeString(pick(rng, ['x', 'é', '\ud83d\ude00', '\\']), size)),
      };
    }
    case 3:
      return {
        kind: 'wrong type',
        body: JSON.stringify(setAt(template, at, pick(rng, VALUES(rng)) as Json)),
      };
    case 4: {
      const key = pick(rng, [
        '__proto__',
        'constructor',
        'prototype',
        '__defineGetter__',
        'hasOwnProperty',
        'toJSON',
        'then',
      ]);
      const text = JSON.stringify(template);
      const where = text.indexOf('{', int(rng, Math.max(1, text.length)));
      const spot = where < 0 ? text.indexOf('{') : where;
      if (spot < 0) return { kind: `key ${key}`, body: `{"${key}":{"polluted":true}}` };
      return {
        kind: `key ${key}`,
        body: `${text.slice(0, spot + 1)}"${key}":${pick(rng, ['{"polluted":true}', 'null', '1', '"x"', '[]'])},${text.slice(spot + 1)}`.replace(
          /,}/g,
          '}',
        ),
      };
    }
    case 5:
      return { kind: 'odd literal', body: withRaw(template, at, pick(rng, ODD_LITERALS)) };
    case 6:
      return {
        kind: 'odd unicode',
        body: JSON.stringify(
          setAt(
            template,
            at,
            pick(
              rng,
              ODD_STRINGS.filter((s) => s.length < 300),
            ) + pick(rng, ODD_STRINGS),
          ),
        ),
      };
    case 7: {
      const text = enc.encode(JSON.stringify(template));
      const bad = pick(rng, [
        [0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80],
        [0xe2, 0x82],
        [0x80],
      ]);
      const pos = int(rng, text.length + 1);
      const out = new Uint8Array(text.length + bad.length);
      out.set(text.subarray(0, pos));
      out.set(bad, pos);
      out.set(text.subarray(pos), pos + bad.length);
      return { kind: 'invalid utf-8', body: out };
    }
    case 8: {
      const text = JSON.stringify(template);
      return { kind: 'truncated', body: text.slice(0, int(rng, text.length)) };
    }
    case 9: {
      const text = JSON.stringify(template);
      return {
        kind: 'duplicate keys',
        body: text.replace(
          /^\{/,
          `{"${Object.keys((template as Record<string, Json>) ?? {})[0] ?? 'a'}":${pick(rng, ODD_LITERALS)},`,
        ),
      };
    }
    case 10:
      return {
        kind: 'bare value',
        body: pick(rng, [
          ...ODD_LITERALS,
          '',
          ' ',
          '\n',
          '"just a string"',
          '[1,2,3]',
          'NaN',
          '{"a":1}{"b":2}',
          '\ufeff{}',
          'nul',
        ]),
      };
    case 11: {
      const n = pick(rng, [0, 1, 2, 63, 64, 65, 200]);
      return {
        kind: `batch ${n}`,
        body: JSON.stringify(
          Array.from({ length: n }, () =>
            rng() < 0.7 ? clone(pick(rng, templates) as Json) : pick(rng, VALUES(rng)),
          ),
        ),
      };
    }
    default: {
      // Several mutations at once, each kept valid JSON.
      let doc: Json = template;
      for (let i = 0; i < 1 + int(rng, 4); i++)
        doc = setAt(doc, pick(rng, paths(doc)), pick(rng, VALUES(rng)) as Json);
      return { kind: 'several wrong types', body: JSON.stringify(doc) };
    }
  }
}
