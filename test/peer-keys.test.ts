/** Key files: `bun run keys` and lib/peer/keys.ts make, keep, rotate and load them; nothing leaks. */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { ensureKeys, listKeys, loadPeerIdentity, retireKeys, rotateKey } from '../lib/peer/keys.ts';
import { parseRing } from '../lib/peer/key-files.ts';
import { bunCommand } from './support/bundle.ts';
import { signatureFields } from './support/peer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = mkdtempSync(join(tmpdir(), 'peer-keys-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `d${n++}`);
const fleet = parseFleet({
  hub: { name: 'a2a', port: 4100, role: 'hub', file: 'hub/main.ts' },
  nodes: [
    { name: 'crm', port: 4101, role: 'crm', file: 'node/crm/index.ts' },
    { name: 'scanner', port: 4102, role: 'scanner', file: 'node/scanner/index.ts' },
  ],
});
const NOW = 1_767_225_600_000;
const body = new TextEncoder().encode('{}');
const toScanner = { to: 'scanner', route: '/peer/invoke', scope: 'echo' };
const mode = (p: string) => statSync(p).mode & 0o777;
const read = (dir: string, f: string) => readFileSync(join(dir, 'keys', f), 'utf8');

describe('ensureKeys', () => {
  test('creates the secret, one pair per member and the ring, private files 0600', async () => {
    const dir = freshDir();
    const { created } = await ensureKeys(dir, fleet);
    expect(created).toEqual([
      'fleet.secret',
      'a2a.ed25519.json',
      'crm.ed25519.json',
      'scanner.ed25519.json',
      'ring.json',
    ]);
    expect(mode(join(dir, 'keys'))).toBe(0o700);
    for (const f of [
      'fleet.secret',
      'a2a.ed25519.json',
      'crm.ed25519.json',
      'scanner.ed25519.json',
    ])
      expect([f, mode(join(dir, 'keys', f))]).toEqual([f, 0o600]);
    const ring = parseRing(JSON.parse(read(dir, 'ring.json')));
    expect([...ring.keys()]).toEqual(['a2a', 'crm', 'scanner']);
    expect(ring.get('crm')).toMatchObject({ mode: 'ed25519', ed25519: [expect.any(Uint8Array)] });
  });

  test('is idempotent: a second run creates nothing and changes no byte', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    const before = ['fleet.secret', 'crm.ed25519.json', 'ring.json'].map((f) => read(dir, f));
    expect(await ensureKeys(dir, fleet)).toEqual({ created: [] });
    expect(['fleet.secret', 'crm.ed25519.json', 'ring.json'].map((f) => read(dir, f))).toEqual(
      before,
    );
    await ensureKeys(dir, fleet, { force: true });
    expect(read(dir, 'crm.ed25519.json')).not.toBe(before[1]);
  });

  test('a new fleet member gets a pair; others keep theirs', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    const crm = read(dir, 'crm.ed25519.json');
    const bigger = parseFleet({
      hub: { ...fleet.hub },
      nodes: [...fleet.nodes, { name: 'lan', port: 4105, role: 'lan', file: 'node/lan/index.ts' }],
    });
    expect((await ensureKeys(dir, bigger)).created).toEqual(['lan.ed25519.json', 'ring.json']);
    expect(read(dir, 'crm.ed25519.json')).toBe(crm);
  });

  test('malformed files are reported by name, not content', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    writeFileSync(join(dir, 'keys', 'crm.ed25519.json'), '{"node":"crm","privateKey":"nope"}');
    await expect(ensureKeys(dir, fleet)).rejects.toThrow('crm.ed25519.json is malformed');
    writeFileSync(
      join(dir, 'keys', 'ring.json'),
      '{"version":1,"nodes":{"../x":{"mode":"ed25519","keys":[]}}}',
    );
    await expect(loadPeerIdentity(dir, 'crm')).rejects.toThrow('ring: invalid node name');
  });
});

describe('parseRing', () => {
  const key = 'A'.repeat(43);
  const ring = (nodes: unknown) => () => parseRing({ version: 1, nodes });
  test('each malformed entry is refused with the path of the field at fault', () => {
    expect(ring({ crm: 'x' })).toThrow('ring: crm must be an object');
    expect(ring({ crm: { mode: 'rsa', keys: [] } })).toThrow(
      'ring: crm.mode must be one of ed25519, derived, shared',
    );
    expect(ring({ crm: { mode: 'ed25519', keys: {} } })).toThrow('ring: crm.keys must be an array');
    expect(ring({ crm: { mode: 'ed25519', keys: [null] } })).toThrow(
      'ring: crm.keys[0] must be an object',
    );
    expect(ring({ crm: { mode: 'ed25519', keys: [{ publicKey: 'short' }] } })).toThrow(
      'ring: crm.keys[0].publicKey must be 32 bytes in base64url',
    );
    expect(ring({ crm: { mode: 'ed25519', keys: [] } })).toThrow(
      'ring: crm is ed25519 but has no key',
    );
    expect(ring({ crm: { mode: 'ed25519', keys: [{ publicKey: key }], relay: 'yes' } })).toThrow(
      'ring: crm.relay must be a boolean',
    );
    expect(() => parseRing({ version: 2, nodes: {} })).toThrow('ring: expected { version: 1');
  });

  test('a well-formed entry reads as the verifier needs it', () => {
    const r = parseRing({
      version: 1,
      nodes: { crm: { mode: 'ed25519', keys: [{ publicKey: key }], relay: true } },
    });
    expect(r.get('crm')?.mode).toBe('ed25519');
    expect(r.get('crm')?.ed25519[0]?.length).toBe(32);
    expect(r.get('crm')?.relay).toBe(true);
  });
});

describe('loading and rotating', () => {
  test('loadPeerIdentity gives a signer and verifier that accept each other across nodes', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    const crm = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    const scanner = await loadPeerIdentity(dir, 'scanner', { now: () => NOW });
    const h = new Headers(await crm.signer.sign(toScanner, body));
    expect(await scanner.verifier.verify(h, body, '/peer/invoke')).toMatchObject({
      ok: true,
      result: { node: 'crm', mode: 'pairwise' },
    });
    const ed = new Headers(await crm.signer.sign(toScanner, body, { mode: 'ed25519' }));
    expect(await scanner.verifier.verify(ed, body, '/peer/invoke')).toMatchObject({
      ok: true,
      result: { node: 'crm', mode: 'ed25519' },
    });
    // the hub loads its identity the same way: its fleet.invoke signs pairwise to every ring member
    const hub = await loadPeerIdentity(dir, 'a2a', { now: () => NOW });
    const fromHub = new Headers(await hub.signer.sign(toScanner, body));
    expect([
      signatureFields(fromHub.get('x-peer-signature')!).mode,
      await scanner.verifier.verify(fromHub, body, '/peer/invoke'),
    ]).toEqual(['pairwise', { ok: true, result: expect.objectContaining({ node: 'a2a' }) }]);
    await expect(loadPeerIdentity(dir, 'stranger')).rejects.toThrow('not in the ring');
    await expect(loadPeerIdentity(freshDir(), 'crm')).rejects.toThrow('bun run keys');
  });

  test('rotate keeps the previous key in the ring until retire (pairwise, the default)', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    const old = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    const rotated = await rotateKey(dir, fleet, 'crm');
    expect(rotated.ring).toHaveLength(2);
    expect((await listKeys(dir)).find((k) => k.node === 'crm')?.kids).toEqual(rotated.ring);
    const fresh = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    const during = await loadPeerIdentity(dir, 'scanner', { now: () => NOW });
    const check = async (v: typeof during, s: typeof old) => {
      const r = await v.verifier.verify(
        new Headers(await s.signer.sign(toScanner, body)),
        body,
        '/peer/invoke',
      );
      return r.ok ? 'ok' : r.error.code;
    };
    expect([await check(during, old), await check(during, fresh)]).toEqual(['ok', 'ok']);
    await retireKeys(dir, fleet, 'crm');
    const after = await loadPeerIdentity(dir, 'scanner', { now: () => NOW });
    expect([await check(after, old), await check(after, fresh)]).toEqual([
      'PEER_BAD_SIGNATURE',
      'ok',
    ]);
    expect(existsSync(join(dir, 'keys', 'crm.ed25519.previous.json'))).toBe(false);
    // rotating twice without retiring keeps at most two keys
    await rotateKey(dir, fleet, 'crm');
    await rotateKey(dir, fleet, 'crm');
    expect((await listKeys(dir)).find((k) => k.node === 'crm')?.kids).toHaveLength(2);
  });

  test('a rotated receiver still answers callers that hold the old ring, until retire', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    const toCrm = { to: 'crm', route: '/peer/invoke', scope: 'echo' };
    const scannerBefore = await loadPeerIdentity(dir, 'scanner', { now: () => NOW }); // knows crm's old key only
    const crmBefore = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    await rotateKey(dir, fleet, 'crm');
    expect(mode(join(dir, 'keys', 'crm.ed25519.previous.json'))).toBe(0o600);
    const scannerAfter = await loadPeerIdentity(dir, 'scanner', { now: () => NOW });
    const outcome = async (
      caller: typeof crmBefore,
      receiver: typeof crmBefore,
      opts: { mode?: 'ed25519' } = {},
    ) => {
      const h = new Headers(await caller.signer.sign(toCrm, body, opts));
      const r = await receiver.verifier.verify(h, body, '/peer/invoke');
      return r.ok ? `ok ${r.result.mode}` : r.error.code;
    };
    const crmDuring = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    // the new pair key, and the old one (crm's previous pair), both accepted during the rotation
    expect([
      await outcome(scannerAfter, crmDuring),
      await outcome(scannerBefore, crmDuring),
    ]).toEqual(['ok pairwise', 'ok pairwise']);
    expect(await outcome(scannerBefore, crmBefore)).toBe('ok pairwise'); // the crm that never rotated
    await retireKeys(dir, fleet, 'crm');
    const crmAfter = await loadPeerIdentity(dir, 'crm', { now: () => NOW });
    expect([
      await outcome(scannerAfter, crmAfter),
      await outcome(scannerBefore, crmAfter),
      await outcome(scannerBefore, crmAfter, { mode: 'ed25519' }),
    ]).toEqual(['ok pairwise', 'PEER_BAD_SIGNATURE', 'ok ed25519']);
  });

  test('only fleet members with plain names can be rotated', async () => {
    const dir = freshDir();
    await ensureKeys(dir, fleet);
    await expect(rotateKey(dir, fleet, '../../etc/passwd')).rejects.toThrow('invalid node name');
    await expect(rotateKey(dir, fleet, 'lan')).rejects.toThrow('not a fleet member');
  });
});

describe('bun run keys', () => {
  test('creates keys from FLEET_FILE into DATA_DIR and prints no key material', async () => {
    const dir = freshDir();
    const fleetFile = join(root, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify({ hub: fleet.hub, nodes: fleet.nodes }));
    const run = async (...args: string[]) => {
      const p = Bun.spawn(bunCommand(['hub/cli/keys.ts', ...args]), {
        env: { ...process.env, DATA_DIR: dir, FLEET_FILE: fleetFile },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const [out, err, code] = await Promise.all([
        new Response(p.stdout).text(),
        new Response(p.stderr).text(),
        p.exited,
      ]);
      return { out, err, code };
    };
    const outputs = [
      await run(),
      await run(),
      await run('rotate', 'crm'),
      await run('list'),
      await run('retire', 'crm'),
      await run('rotate', '../x'),
      await run('nonsense'),
    ];
    expect(outputs.map((o) => o.code)).toEqual([0, 0, 0, 0, 0, 1, 2]);
    expect(outputs[0]!.out).toContain('created in');
    expect(outputs[1]!.out).toContain('complete');
    const secrets = [
      read(dir, 'fleet.secret').trim(),
      ...['a2a', 'crm', 'scanner'].map(
        (n) => JSON.parse(read(dir, `${n}.ed25519.json`)).privateKey as string,
      ),
    ];
    const printed = outputs.map((o) => o.out + o.err).join('\n');
    expect(secrets.filter((s) => printed.includes(s))).toEqual([]);
  });
});
