/**
 * X-Peer-Signature values are read the same whichever way parseSignature takes (the one-pass
 * reading of the signer's order, or the general loop for anything else): values in every field
 * order, with repeated, missing, unknown or empty fields, `=` inside a value and stray spaces
 * all give the result the header's rules (docs/peer.md) give.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { PEER_FIELDS, parseSignature } from '../lib/peer/signature.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** The header's rules, written out plainly: `v1`, then space-separated name=value parts, each name once. */
function byTheRules(value: string) {
  if (!value.startsWith('v1 ')) return { ok: false, code: 'PEER_BAD_HEADER' };
  const f: Record<string, string> = {};
  for (const part of value.slice(3).split(' ')) {
    const eq = part.indexOf('=');
    if (eq < 0) return { ok: false, code: 'PEER_BAD_HEADER' };
    const name = part.slice(0, eq);
    if (!(PEER_FIELDS as readonly string[]).includes(name) || name in f)
      return { ok: false, code: 'PEER_BAD_HEADER' };
    f[name] = part.slice(eq + 1);
  }
  if (PEER_FIELDS.some((k) => !(k in f))) return { ok: false, code: 'PEER_UNSIGNED' };
  return { ok: true, fields: f };
}

const outcome = (value: string) => {
  const r = parseSignature(value);
  return r.ok ? { ok: true, fields: { ...r.result } } : { ok: false, code: r.error.code };
};

const good: [string, string][] = [
  ['node', 'a2a'],
  ['ts', '1764653000000'],
  ['nonce', 'AAAAAAAAAAAAAAAAAAAAAA'],
  ['scope', 'scanner.status'],
  ['to', 'scanner'],
  ['route', '/peer/invoke'],
  ['mode', 'pairwise'],
  ['sig', 'B'.repeat(43)],
];
const header = (parts: string[]) => `v1 ${parts.join(' ')}`;

test('every field order, and values bent every way, read as the rules say', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), (seed >>> 16) % n);
  const values: string[] = [header(good.map(([k, v]) => `${k}=${v}`))];
  for (let i = 0; i < 3000; i++) {
    const parts = good.map(([k, v]) => `${k}=${v}`);
    if (i % 2) parts.sort(() => rand(3) - 1); // another order
    switch (rand(8)) {
      case 0:
        parts.push(parts[rand(parts.length)]!); // a field twice
        break;
      case 1:
        parts.splice(rand(parts.length), 1); // a field missing
        break;
      case 2:
        parts[rand(parts.length)] += '=x'; // `=` inside a value
        break;
      case 3:
        parts[rand(parts.length)] = `${good[rand(8)]![0]}=`; // an empty value, maybe twice
        break;
      case 4:
        parts.splice(rand(parts.length), 0, 'extra=1'); // an unknown field
        break;
      case 5:
        parts.splice(rand(parts.length), 0, ''); // two spaces in a row
        break;
      case 6:
        parts.push(''); // a trailing space
        break;
    }
    values.push(header(parts));
  }
  let read = 0;
  for (const v of values) {
    const want = byTheRules(v);
    expect(outcome(v) as object).toMatchObject(want);
    if (want.ok) read++;
  }
  expect(read).toBeGreaterThan(300); // enough of them are whole headers
  expect(outcome(values[0]!) as object).toEqual({ ok: true, fields: Object.fromEntries(good) });
});
