/**
 * @module node/lan/index — read-only snapshot of the local network: hosts online, interface traffic and DNS.
 * Reads the machine (`/proc/net/dev`, `/proc/net/arp`, `/etc/resolv.conf`) where it can and
 * `fixtures/lan/snapshot.json` elsewhere; every answer says which source answered.
 */

import { capability } from '../../lib/catalog/capability.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import * as q from './queries.ts';
import {
  readInterfaces,
  readNeighbours,
  readResolver,
  SYSTEM_PATHS,
  type LanPaths,
} from './system-source.ts';

/** A live reading's time, to the second: answers read in the same second are equal. */
const nowToTheSecond = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();

/** The system files to read may be moved (tests point them at missing or crafted files). */
type LanOptions = Pick<NodeSetup, 'fixturesDir'> & Partial<LanPaths>;

export default defineNode((opts: LanOptions) => {
  const load = jsonFixture<q.Snapshot>(`${opts.fixturesDir}/lan/snapshot.json`);
  const paths: LanPaths = {
    procNetDev: opts.procNetDev ?? SYSTEM_PATHS.procNetDev,
    procArp: opts.procArp ?? SYSTEM_PATHS.procArp,
    resolvConf: opts.resolvConf ?? SYSTEM_PATHS.resolvConf,
  };
  /** The live reading when there is one, else the fixture's; `asOf` is when it was true. */
  const pick = <T>(live: T | undefined, fixture: (s: q.Snapshot) => T): q.Sourced<T> =>
    live !== undefined
      ? { source: 'live', asOf: nowToTheSecond(), value: live }
      : { source: 'fixture', asOf: load().asOf, value: fixture(load()) };
  const interfaces = () => pick(readInterfaces(paths), (s) => s.interfaces);
  const hosts = () => pick(readNeighbours(paths), (s) => s.hosts);
  const dns = () => pick<q.Dns>(readResolver(paths), (s) => s.dns);

  return {
    name: 'lan',
    dataPaths: [`${opts.fixturesDir}/lan/snapshot.json`],
    // A reasoning agent: with a model configured, the model plans every question it can.
    modelMode: 'model',
    description:
      'Read-only snapshot of the local network: hosts online, interface traffic and DNS, read from the machine where possible. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    capabilities: [
      capability({
        id: 'lan.hosts',
        name: 'Hosts online',
        description:
          'Hosts on the local network (neighbour table): address, vendor half of the hardware address, interface, online or not.',
        tags: ['network', 'hosts'],
        keywords: ['host', 'hosts', 'online', 'devices', 'device', 'who is on'],
        readOnly: true,
        args: {},
        run: () => q.hosts(hosts()),
        summarize: (h) => `${h.online} of ${h.hosts.length} hosts online (${h.source})`,
      }),
      capability({
        id: 'lan.traffic',
        name: 'Interface traffic',
        description:
          'Bytes and packets received and sent per interface since boot, errors and drops, busiest first, with totals.',
        tags: ['network', 'traffic'],
        keywords: ['traffic', 'bandwidth', 'bytes', 'interface', 'interfaces', 'throughput'],
        readOnly: true,
        args: {},
        run: () => q.traffic(interfaces()),
        summarize: (t) => {
          const gb = (n: number) => (n / 1e9).toFixed(2);
          return `${t.interfaces.length} interfaces, ${gb(t.totals.rxBytes)} GB in / ${gb(t.totals.txBytes)} GB out (${t.source})`;
        },
      }),
      capability({
        id: 'lan.dns',
        name: 'DNS',
        description:
          'Nameservers and search domains in use; the fixture also carries query counts and the most queried domains.',
        tags: ['network', 'dns'],
        keywords: ['dns', 'nameserver', 'nameservers', 'resolver', 'domains'],
        readOnly: true,
        args: {},
        run: () => q.dns(dns()),
        summarize: (d) =>
          `${d.nameservers.length} nameserver${d.nameservers.length === 1 ? '' : 's'}: ${d.nameservers.join(', ') || 'none'} (${d.source})`,
      }),
      capability({
        id: 'lan.status',
        name: 'LAN status',
        description:
          'Counts of interfaces, hosts online and nameservers, and which source answered each part.',
        tags: ['status'],
        keywords: ['status', 'health', 'lan', 'network'],
        readOnly: true,
        args: {},
        run: () => q.status(interfaces(), hosts(), dns()),
        summarize: (s) =>
          `${s.interfaces} interfaces, ${s.hostsOnline} hosts online, ${s.nameservers} nameservers (${s.source})`,
      }),
    ],
  };
});
