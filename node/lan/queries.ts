/**
 * @module node/lan/queries — lan's answers from a reading of the network (live or the fixture's
 * `fixtures/lan/snapshot.json`): hosts online, traffic per interface, DNS and the status counts.
 */

import type { Iface, Neighbour, Resolver } from './system-source.ts';

export interface Snapshot {
  asOf: string;
  interfaces: Iface[];
  hosts: Neighbour[];
  dns: Resolver & {
    queriesToday: number;
    blockedToday: number;
    topDomains: { domain: string; queries: number }[];
  };
}
type Source = 'live' | 'fixture';
/** One part of a reading, with which source answered and when it was true. */
export interface Sourced<T> {
  source: Source;
  asOf: string;
  value: T;
}
/** Live DNS is only the resolver configuration; query counts exist only in the fixture. */
export type Dns = Resolver & Partial<Snapshot['dns']>;

export function hosts({ source, asOf, value }: Sourced<Neighbour[]>) {
  return { source, asOf, online: value.filter((h) => h.online).length, hosts: value };
}

/** Counters since boot per interface, busiest first, with totals. */
export function traffic({ source, asOf, value }: Sourced<Iface[]>) {
  const rows = [...value].sort((a, b) => b.rxBytes + b.txBytes - (a.rxBytes + a.txBytes));
  const totals = {
    rxBytes: rows.reduce((n, i) => n + i.rxBytes, 0),
    txBytes: rows.reduce((n, i) => n + i.txBytes, 0),
  };
  return { source, asOf, counters: 'since-boot', interfaces: rows, totals };
}

export function dns({ source, asOf, value }: Sourced<Dns>) {
  return { source, asOf, ...value };
}

/** Counts of each part, and `mixed` when the parts came from different sources. */
export function status(i: Sourced<Iface[]>, h: Sourced<Neighbour[]>, d: Sourced<Dns>) {
  const sources = { interfaces: i.source, hosts: h.source, dns: d.source };
  const all = new Set(Object.values(sources));
  return {
    source: all.size === 1 ? i.source : 'mixed',
    sources,
    interfaces: i.value.length,
    hostsOnline: h.value.filter((x) => x.online).length,
    nameservers: d.value.nameservers.length,
  };
}
