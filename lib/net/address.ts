/**
 * @module lib/net/address — IP addresses as numbers, in any spelling a URL or a resolver may give
 * (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`, `::ffff:127.0.0.1`, `[::1]`), and what kind of
 * network each belongs to, so an outgoing connection can be kept off the local network.
 */

/** An address: 32 bits (IPv4) or 128 bits (IPv6) as a bigint. */
export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

/** Why an address is not on the public internet; `public` when it is a global unicast address. */
export type AddressKind =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared' // carrier-grade NAT, 100.64.0.0/10
  | 'multicast'
  | 'reserved'
  | 'metadata';

/** One IPv4 part in the forms URL parsers accept: decimal, octal (leading 0) or hex (0x). */
function ipv4Part(s: string): bigint | undefined {
  if (/^0x[0-9a-f]*$/i.test(s)) return s.length === 2 ? 0n : BigInt(s);
  if (/^0[0-7]+$/.test(s)) return BigInt(`0o${s.slice(1)}`);
  if (/^(0|[1-9][0-9]*)$/.test(s)) return BigInt(s);
  return undefined;
}

/**
 * An IPv4 address in the legacy forms `inet_aton` and the URL standard accept: one to four parts,
 * the last filling the remaining bytes (`127.1` is 127.0.0.1, `2130706433` is 127.0.0.1).
 */
function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.endsWith('.') ? text.slice(0, -1).split('.') : text.split('.');
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => p === '')) return undefined;
  const nums = parts.map(ipv4Part);
  if (nums.some((n) => n === undefined)) return undefined;
  const values = nums as bigint[];
  const last = values.pop()!;
  if (values.some((v) => v > 255n)) return undefined;
  if (last >= 1n << BigInt(8 * (4 - values.length))) return undefined;
  let value = 0n;
  for (const v of values) value = (value << 8n) | v;
  value = (value << BigInt(8 * (4 - values.length))) | last;
  return { family: 4, value };
}

/** An IPv6 address (brackets, a zone and an embedded dotted IPv4 tail allowed). */
function parseIpv6(text: string): IpAddress | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return undefined;
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) is the last two groups written another way.
  const lastColon = s.lastIndexOf(':');
  const v4 = s.slice(lastColon + 1);
  if (v4.includes('.')) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v4)) return undefined;
    const b = v4.split('.').map(Number);
    if (b.some((x) => x > 255)) return undefined;
    s = `${s.slice(0, lastColon + 1)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const group = (g: string) => (/^[0-9a-f]{1,4}$/i.test(g) ? BigInt(`0x${g}`) : undefined);
  const split = (h: string) => (h === '' ? [] : h.split(':').map(group));
  const head = split(halves[0]!);
  const rest = halves.length === 2 ? split(halves[1]!) : [];
  if ([...head, ...rest].some((g) => g === undefined)) return undefined;
  const given = head.length + rest.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  const groups = [
    ...(head as bigint[]),
    ...Array<bigint>(8 - given).fill(0n),
    ...(rest as bigint[]),
  ];
  let value = 0n;
  for (const g of groups) value = (value << 16n) | g;
  return { family: 6, value };
}

/** An address in any spelling, or undefined when the text is a host name. */
export function parseIp(text: string): IpAddress | undefined {
  return text.includes(':') || text.startsWith('[') ? parseIpv6(text) : parseIpv4(text);
}

/** The canonical spelling (dotted quad, or the fully expanded IPv6 groups, lower-case). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4)
    return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 255n)).join('.');
  return Array.from({ length: 8 }, (_, i) =>
    ((ip.value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16),
  ).join(':');
}

/** A range `address/bits`. */
export interface IpRange {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

/** A range in CIDR notation (`10.0.0.0/8`, `fc00::/7`), or a single address; undefined otherwise. */
export function parseRange(text: string): IpRange | undefined {
  const slash = text.lastIndexOf('/');
  const ip = parseIp(slash >= 0 ? text.slice(0, slash) : text);
  if (!ip) return undefined;
  const width = ip.family === 4 ? 32 : 128;
  const bits = slash >= 0 ? Number(text.slice(slash + 1)) : width;
  if (!Number.isInteger(bits) || bits < 0 || bits > width) return undefined;
  return { family: ip.family, base: ip.value, bits };
}

export function inRange(ip: IpAddress, r: IpRange): boolean {
  if (ip.family !== r.family) return false;
  const shift = BigInt((ip.family === 4 ? 32 : 128) - r.bits);
  return ip.value >> shift === r.base >> shift;
}

const range = (text: string): IpRange => parseRange(text)!;

/** Every IPv4 range that is not the public internet (RFC 6890 and its updates). First match wins. */
const V4_RANGES: readonly [IpRange, AddressKind][] = [
  [range('169.254.169.254/32'), 'metadata'], // cloud instance metadata (AWS, GCP, Azure, …)
  [range('192.0.0.192/32'), 'metadata'], // Oracle Cloud metadata
  [range('0.0.0.0/8'), 'unspecified'],
  [range('10.0.0.0/8'), 'private'],
  [range('100.64.0.0/10'), 'shared'],
  [range('127.0.0.0/8'), 'loopback'],
  [range('169.254.0.0/16'), 'link-local'],
  [range('172.16.0.0/12'), 'private'],
  [range('192.0.0.0/24'), 'reserved'], // IETF protocol assignments
  [range('192.0.2.0/24'), 'reserved'], // documentation
  [range('192.88.99.0/24'), 'reserved'], // 6to4 relay anycast
  [range('192.168.0.0/16'), 'private'],
  [range('198.18.0.0/15'), 'reserved'], // benchmarking
  [range('198.51.100.0/24'), 'reserved'],
  [range('203.0.113.0/24'), 'reserved'],
  [range('224.0.0.0/4'), 'multicast'],
  [range('240.0.0.0/4'), 'reserved'], // includes 255.255.255.255
];

/** IPv6 ranges that carry an IPv4 address in their low 32 bits: judged by that address. */
const V6_EMBEDDING_V4: readonly IpRange[] = [
  range('::ffff:0:0/96'), // IPv4-mapped
  range('::/96'), // IPv4-compatible (deprecated), after :: and ::1 are handled
  range('64:ff9b::/96'), // NAT64
];

const V6_RANGES: readonly [IpRange, AddressKind][] = [
  [range('::/128'), 'unspecified'],
  [range('::1/128'), 'loopback'],
  [range('fd00:ec2::254/128'), 'metadata'], // AWS instance metadata over IPv6
  [range('64:ff9b:1::/48'), 'reserved'], // local-use NAT64
  [range('100::/64'), 'reserved'], // discard
  [range('2001::/23'), 'reserved'], // IETF protocol assignments, Teredo included
  [range('2001:db8::/32'), 'reserved'], // documentation
  [range('2002::/16'), 'reserved'], // 6to4: carries an IPv4 address a relay would reach
  [range('fc00::/7'), 'private'], // unique local
  [range('fe80::/10'), 'link-local'],
  [range('fec0::/10'), 'private'], // site-local (deprecated)
  [range('ff00::/8'), 'multicast'],
];

const GLOBAL_UNICAST_V6 = range('2000::/3');

/** What kind of network an address belongs to. Only `public` addresses are the internet. */
export function classify(ip: IpAddress): AddressKind {
  if (ip.family === 4) return V4_RANGES.find(([r]) => inRange(ip, r))?.[1] ?? 'public';
  const known = V6_RANGES.find(([r]) => inRange(ip, r));
  if (known) return known[1];
  if (V6_EMBEDDING_V4.some((r) => inRange(ip, r)))
    return classify({ family: 4, value: ip.value & 0xffffffffn });
  return inRange(ip, GLOBAL_UNICAST_V6) ? 'public' : 'reserved';
}
