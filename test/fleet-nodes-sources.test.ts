/**
 * lan and cicdkit read the machine where they can and fall back to their fixtures elsewhere;
 * every answer names its source, and no missing file, foreign format or failing git is a crash.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import cicdkit from '../node/cicdkit/index.ts';
import { parseGitLog } from '../node/cicdkit/git-source.ts';
import lan from '../node/lan/index.ts';
import { ROOT } from './support/fleet-nodes.ts';
import { FIXTURES, msgV1, rpc, startNode, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => (
  writeFileSync(`${dir}/${name}`, text), `${dir}/${name}`
);
const absent = `${dir}/absent`;

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1200      12    0    0    0     0          0         0     1200      12    0    0    0     0       0          0
  eth0: 9000000    7000    1    2    0     0          0         3  4000000    5000    0    4    0     0       0          0
`;
const ARP = `IP address       HW type     Flags       HW address            Mask     Device
10.0.0.1         0x1         0x2         aa:bb:cc:dd:ee:ff     *        eth0
10.0.0.9         0x1         0x0         00:00:00:00:00:00     *        eth0
`;
const RESOLV = `# written by the test
nameserver 10.0.0.53
nameserver 1.1.1.1 ; second
search corp.example lab.example
options edns0
`;

const call = async (url: string, skill: string) =>
  (
    await rpc(url, 'SendMessage', {
      message: { ...msgV1(''), parts: [{ data: { skill, args: {} } }] },
    })
  ).result.task.artifacts[0].parts[0].data;

test("lan answers from the machine's files when they are there (over A2A)", async () => {
  const node = await startNode(
    lan({
      fixturesDir: FIXTURES,
      procNetDev: file('dev', NET_DEV),
      procArp: file('arp', ARP),
      resolvConf: file('resolv', RESOLV),
    }),
  );
  try {
    const traffic = await call(node.url, 'lan.traffic');
    expect([traffic.source, traffic.totals, traffic.interfaces.map((i: any) => i.name)]).toEqual([
      'live',
      { rxBytes: 9001200, txBytes: 4001200 },
      ['eth0', 'lo'],
    ]);
    expect(traffic.interfaces[0]).toEqual({
      name: 'eth0',
      rxBytes: 9000000,
      rxPackets: 7000,
      rxErrors: 1,
      rxDrops: 2,
      txBytes: 4000000,
      txPackets: 5000,
      txErrors: 0,
      txDrops: 4,
    });
    const hosts = await call(node.url, 'lan.hosts');
    expect([hosts.source, hosts.online, hosts.hosts]).toEqual([
      'live',
      1,
      [
        { ip: '10.0.0.1', mac: 'aa:bb:cc:xx:xx:xx', device: 'eth0', online: true },
        { ip: '10.0.0.9', mac: '00:00:00:xx:xx:xx', device: 'eth0', online: false },
      ],
    ]);
    const dns = await call(node.url, 'lan.dns');
    expect([dns.source, dns.nameservers, dns.search]).toEqual([
      'live',
      ['10.0.0.53', '1.1.1.1'],
      ['corp.example', 'lab.example'],
    ]);
    expect(await call(node.url, 'lan.status')).toEqual({
      source: 'live',
      sources: { interfaces: 'live', hosts: 'live', dns: 'live' },
      interfaces: 2,
      hostsOnline: 1,
      nameservers: 2,
    });
  } finally {
    await node.dispose();
  }
});

test('lan falls back to its fixture for a missing file or a foreign format, and says so per part', async () => {
  const def = lan({
    fixturesDir: FIXTURES,
    procNetDev: file('dev-ok', NET_DEV),
    procArp: absent,
    resolvConf: dir /* a folder, not a file */,
  });
  const status = await def.catalog.invoke('lan.status', {});
  expect(status).toEqual({
    ok: true,
    result: {
      source: 'mixed',
      sources: { interfaces: 'live', hosts: 'fixture', dns: 'fixture' },
      interfaces: 2,
      hostsOnline: 6,
      nameservers: 2,
    },
    summary: expect.any(String),
  });
  const foreign = lan({
    fixturesDir: FIXTURES,
    procNetDev: file('not-dev', 'hello\nworld\n'),
    procArp: file('not-arp', 'nothing here'),
  });
  expect(await foreign.catalog.invoke('lan.traffic', {})).toMatchObject({
    ok: true,
    result: { source: 'fixture', asOf: '2026-11-27T09:30:00+08:00' },
  });
  expect(await foreign.catalog.invoke('lan.hosts', {})).toMatchObject({
    ok: true,
    result: { source: 'fixture', online: 6 },
  });
});

test('lan reads this machine by default where /proc and /etc/resolv.conf exist', async () => {
  const def = lan({ fixturesDir: FIXTURES });
  const traffic = (await def.catalog.invoke('lan.traffic', {})) as any;
  expect(traffic.result.source).toBe(existsSync('/proc/net/dev') ? 'live' : 'fixture');
  const dns = (await def.catalog.invoke('lan.dns', {})) as any;
  expect(dns.result.source).toBe(existsSync('/etc/resolv.conf') ? 'live' : 'fixture');
});

test('cicdkit reads the git history of the checkout it runs in', async () => {
  const def = cicdkit({ fixturesDir: FIXTURES });
  const commits = ((await def.catalog.invoke('cicd.commits', {})) as any).result;
  if (!existsSync(`${ROOT}/.git`)) return expect(commits.source).toBe('fixture');
  expect(commits.source).toBe('live');
  expect(commits.commits.length).toBeGreaterThan(0);
  expect(
    commits.commits.every(
      (c: any) =>
        /^[0-9a-f]{7,}$/.test(c.hash) &&
        !Number.isNaN(Date.parse(c.date)) &&
        !c.author.includes('@'),
    ),
  ).toBe(true);
  // The checkout may gain commits meanwhile: the head read must be among the newest ones now.
  const proc = Bun.spawnSync({ cmd: ['git', 'log', '-n', '50', '--format=%h'], cwd: ROOT });
  expect(proc.stdout.toString().split('\n')).toContain(commits.head);
  const activity = ((await def.catalog.invoke('cicd.activity', {})) as any).result;
  expect([activity.source, activity.days.length, activity.total > 0]).toEqual(['live', 14, true]);
});

test('cicdkit falls back to its fixture when the folder is missing, is no checkout, or git cannot run', async () => {
  const notRepo = `${dir}/plain`;
  mkdirSync(notRepo, { recursive: true });
  for (const opts of [
    { repoDir: absent },
    { repoDir: notRepo },
    { repoDir: ROOT, git: `${dir}/no-such-git` },
  ]) {
    const r = (await cicdkit({ fixturesDir: FIXTURES, ...opts }).catalog.invoke(
      'cicd.commits',
      {},
    )) as any;
    expect([opts, r.ok, r.result.source, r.result.head]).toEqual([
      opts,
      true,
      'fixture',
      '9f3c2a1',
    ]);
  }
});

test('git log output: malformed records are skipped and subjects are capped', () => {
  const rec = (...f: string[]) => `${f.join('\x1f')}\x1e`;
  const text = [
    rec('abc1234', '2026-11-27T08:00:00+08:00', 'Ann', 'fix: a'),
    rec('not-a-hash', '2026-11-27T08:00:00+08:00', 'Bob', 'x'),
    rec('def5678', 'yesterday', 'Cy', 'y'),
    rec('0123abc', '2026-11-26T08:00:00+08:00', 'Di'),
    `\n${rec('fedcba9', '2026-11-25T08:00:00+08:00', 'Ed', 's'.repeat(500))}`,
  ].join('');
  expect(parseGitLog(text).map((c) => [c.hash, c.author, c.subject.length])).toEqual([
    ['abc1234', 'Ann', 6],
    ['fedcba9', 'Ed', 200],
  ]);
});
