/**
 * @module node/lan/system-source — what the machine says about its network: interface byte counters from
 * `/proc/net/dev`, the neighbour (ARP) table from `/proc/net/arp` and nameservers from
 * `/etc/resolv.conf`. Each reader is bounded and returns undefined when the file is missing,
 * unreadable or not in the expected format, so the node falls back to its fixture.
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';

export interface Iface {
  name: string;
  rxBytes: number;
  rxPackets: number;
  rxErrors: number;
  rxDrops: number;
  txBytes: number;
  txPackets: number;
  txErrors: number;
  txDrops: number;
}
export interface Neighbour {
  ip: string;
  mac: string;
  device: string;
  online: boolean;
  hostname?: string;
}
export interface Resolver {
  nameservers: string[];
  search: string[];
}

const MAX_READ = 64 * 1024;
const MAX_ROWS = 256;

/** Reads at most `max` bytes of a regular file (files under /proc report size 0, so no stat size). */
function readBounded(path: string, max = MAX_READ): string | undefined {
  let fd: number | undefined;
  try {
    // A FIFO or device would block or never end: only regular files are read.
    if (!statSync(path).isFile()) return undefined;
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(max);
    let n = 0;
    while (n < max) {
      const got = readSync(fd, buf, n, max - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.toString('utf8', 0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `/proc/net/dev`: two header lines, then `name: 8 receive counters 8 transmit counters`. */
function parseNetDev(text: string): Iface[] | undefined {
  if (!text.startsWith('Inter-|')) return undefined;
  const out: Iface[] = [];
  for (const line of text.split('\n').slice(2, 2 + MAX_ROWS)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    const n = m?.[2]?.trim().split(/\s+/).map(Number);
    if (!m || !n || n.length !== 16 || n.some((x) => !Number.isFinite(x))) continue;
    out.push({
      name: m[1]!,
      rxBytes: n[0]!,
      rxPackets: n[1]!,
      rxErrors: n[2]!,
      rxDrops: n[3]!,
      txBytes: n[8]!,
      txPackets: n[9]!,
      txErrors: n[10]!,
      txDrops: n[11]!,
    });
  }
  return out.length ? out : undefined;
}

/** Only the vendor half (OUI) of a hardware address is shown. */
const maskMac = (mac: string) =>
  mac
    .split(':')
    .map((part, i) => (i < 3 ? part : 'xx'))
    .join(':');

/** `/proc/net/arp`: a header, then `IP  HW-type  flags  HW-address  mask  device`; flag 0x2 = complete. */
function parseArp(text: string): Neighbour[] | undefined {
  const lines = text.split('\n');
  if (!lines[0]?.startsWith('IP address')) return undefined;
  const out: Neighbour[] = [];
  for (const line of lines.slice(1, 1 + MAX_ROWS)) {
    const f = line.trim().split(/\s+/);
    if (f.length !== 6 || !/^[0-9a-f:.]+$/i.test(f[0]!)) continue;
    out.push({
      ip: f[0]!,
      mac: maskMac(f[3]!),
      device: f[5]!,
      online: (Number.parseInt(f[2]!, 16) & 0x2) !== 0,
    });
  }
  return out;
}

/** resolv.conf(5): `nameserver`, `search` / `domain` lines; `#` and `;` start comments. */
function parseResolvConf(text: string): Resolver {
  const nameservers: string[] = [];
  const search: string[] = [];
  for (const raw of text.split('\n').slice(0, MAX_ROWS)) {
    const [key, ...values] = raw
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    if (key === 'nameserver' && values[0]) nameservers.push(values[0]);
    if ((key === 'search' || key === 'domain') && values.length)
      search.splice(0, search.length, ...values);
  }
  return { nameservers, search };
}

export interface LanPaths {
  procNetDev: string;
  procArp: string;
  resolvConf: string;
}
export const SYSTEM_PATHS: Readonly<LanPaths> = Object.freeze({
  procNetDev: '/proc/net/dev',
  procArp: '/proc/net/arp',
  resolvConf: '/etc/resolv.conf',
});

const parsed = <T>(path: string, parse: (text: string) => T | undefined): T | undefined => {
  const text = readBounded(path);
  return text === undefined ? undefined : parse(text);
};
export const readInterfaces = (p: LanPaths) => parsed(p.procNetDev, parseNetDev);
export const readNeighbours = (p: LanPaths) => parsed(p.procArp, parseArp);
export const readResolver = (p: LanPaths) => parsed(p.resolvConf, parseResolvConf);
