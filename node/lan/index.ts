/**
 * @module lan — read-only snapshot of the local network: hosts online, interface traffic and DNS.
 * Reads the machine (`/proc/net/dev`, `/proc/net/arp`, `/etc/resolv.conf`) where it can and
 * `fixtures/lan/snapshot.json` elsewhere; every answer says which source answered.
 */

import { Catalog } from '../../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import { readInterfaces, readNeighbours, readResolver, SYSTEM_PATHS, type Iface, type LanPaths, type Neighbour, type Resolver } from './system-source.ts';

interface Snapshot {
  asOf: string;
  interfaces: Iface[];
  hosts: Neighbour[];
  dns: Resolver & { queriesToday: number; blockedToday: number; topDomains: { domain: string; queries: number }[] };
}
type Source = 'live' | 'fixture';
type Sourced<T> = { source: Source; asOf: string; value: T };

/** A live reading's time, to the second: answers read in the same second are equal. */
const nowToTheSecond = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();

export default function lan(opts: { fixturesDir: string } & Partial<LanPaths>): NodeDefinition {
  const load = jsonFixture<Snapshot>(`${opts.fixturesDir}/lan/snapshot.json`);
  const paths: LanPaths = { ...SYSTEM_PATHS, ...Object.fromEntries(Object.entries(opts).filter(([k, v]) => k in SYSTEM_PATHS && typeof v === 'string')) };
  /** The live reading when there is one, else the fixture's; `asOf` is when it was true. */
  const pick = <T>(live: T | undefined, fixture: (s: Snapshot) => T): Sourced<T> =>
    live !== undefined ? { source: 'live', asOf: nowToTheSecond(), value: live } : { source: 'fixture', asOf: load().asOf, value: fixture(load()) };
  const interfaces = () => pick(readInterfaces(paths), (s) => s.interfaces);
  const hosts = () => pick(readNeighbours(paths), (s) => s.hosts);
  // Live DNS is only the resolver configuration; query counts exist only in the fixture.
  const dns = () => pick<Resolver & Partial<Snapshot['dns']>>(readResolver(paths), (s) => s.dns);

  const catalog = new Catalog([
    {
      id: 'lan.hosts',
      name: 'Hosts online',
      description: 'Hosts on the local network (neighbour table): address, vendor half of the hardware address, interface, online or not.',
      tags: ['network', 'hosts'],
      keywords: ['host', 'hosts', 'online', 'devices', 'device', 'who is on'],
      readOnly: true,
      args: {},
      run: () => {
        const { source, asOf, value } = hosts();
        return { source, asOf, online: value.filter((h) => h.online).length, hosts: value };
      },
      summarize: (r) => {
        const h = r as { source: Source; online: number; hosts: unknown[] };
        return `${h.online} of ${h.hosts.length} hosts online (${h.source})`;
      },
    },
    {
      id: 'lan.traffic',
      name: 'Interface traffic',
      description: 'Bytes and packets received and sent per interface since boot, errors and drops, busiest first, with totals.',
      tags: ['network', 'traffic'],
      keywords: ['traffic', 'bandwidth', 'bytes', 'interface', 'interfaces', 'throughput'],
      readOnly: true,
      args: {},
      run: () => {
        const { source, asOf, value } = interfaces();
        const rows = [...value].sort((a, b) => b.rxBytes + b.txBytes - (a.rxBytes + a.txBytes));
        const totals = { rxBytes: rows.reduce((n, i) => n + i.rxBytes, 0), txBytes: rows.reduce((n, i) => n + i.txBytes, 0) };
        return { source, asOf, counters: 'since-boot', interfaces: rows, totals };
      },
      summarize: (r) => {
        const t = r as { source: Source; interfaces: Iface[]; totals: { rxBytes: number; txBytes: number } };
        const gb = (n: number) => (n / 1e9).toFixed(2);
        return `${t.interfaces.length} interfaces, ${gb(t.totals.rxBytes)} GB in / ${gb(t.totals.txBytes)} GB out (${t.source})`;
      },
    },
    {
      id: 'lan.dns',
      name: 'DNS',
      description: 'Nameservers and search domains in use; the fixture also carries query counts and the most queried domains.',
      tags: ['network', 'dns'],
      keywords: ['dns', 'nameserver', 'nameservers', 'resolver', 'domains'],
      readOnly: true,
      args: {},
      run: () => {
        const { source, asOf, value } = dns();
        return { source, asOf, ...value };
      },
      summarize: (r) => {
        const d = r as { source: Source; nameservers: string[] };
        return `${d.nameservers.length} nameserver${d.nameservers.length === 1 ? '' : 's'}: ${d.nameservers.join(', ') || 'none'} (${d.source})`;
      },
    },
    {
      id: 'lan.status',
      name: 'LAN status',
      description: 'Counts of interfaces, hosts online and nameservers, and which source answered each part.',
      tags: ['status'],
      keywords: ['status', 'health', 'lan', 'network'],
      readOnly: true,
      args: {},
      run: () => {
        const [i, h, d] = [interfaces(), hosts(), dns()];
        const sources = { interfaces: i.source, hosts: h.source, dns: d.source };
        const all = new Set(Object.values(sources));
        return {
          source: all.size === 1 ? [...all][0] : 'mixed',
          sources,
          interfaces: i.value.length,
          hostsOnline: h.value.filter((x) => x.online).length,
          nameservers: d.value.nameservers.length,
        };
      },
      summarize: (r) => {
        const s = r as { source: string; interfaces: number; hostsOnline: number; nameservers: number };
        return `${s.interfaces} interfaces, ${s.hostsOnline} hosts online, ${s.nameservers} nameservers (${s.source})`;
      },
    },
  ]);

  return {
    name: 'lan',
    description: 'Read-only snapshot of the local network: hosts online, interface traffic and DNS, read from the machine where possible. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    catalog,
    agentBacked: false,
  };
}
