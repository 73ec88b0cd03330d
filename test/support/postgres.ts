/**
 * @module test/support/postgres — a throw-away PostgreSQL cluster for the tests that run a store
 * on PostgreSQL: `initdb` in a temporary folder, a free loopback port, trust authentication for
 * one user, fsync off; `stop()` ends the server and removes the folder. As root (CI), the server
 * runs as the unprivileged `postgres` user Debian's package creates, since PostgreSQL refuses root.
 */

import { reservePorts } from './ports.ts';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** `postgres://lume@127.0.0.1:<port>/lume` */
  url: string;
  port: number;
  /** The cluster's folder (data, socket, log); gone after stop. */
  dir: string;
  /** A fresh, empty database in this cluster: its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The folder of Debian's PostgreSQL programs (the newest version installed), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const freePort = (): number => reservePorts(1)[0]!;

async function run(argv: string[], asUser: string | undefined): Promise<void> {
  const cmd = asUser ? ['runuser', '-u', asUser, '--', ...argv] : argv;
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`${argv[0]} exited ${code}: ${(err || out).trim().slice(-2000)}`);
}

export interface StartOptions {
  /** Keep fsync, synchronous commit and full page writes on (benchmarks of durable writes); tests leave them off. */
  durable?: boolean;
}

/**
 * Starts a cluster. Throws with what to install when Debian's `postgresql` is missing
 * (`.ci/setup` installs it).
 */
export async function startPostgres(opts: StartOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed: apt-get install -y postgresql (.ci/setup does this)',
    );
  const asUser = userInfo().uid === 0 ? 'postgres' : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'lume-a2a-pg-'));
  if (asUser) {
    // The server's user must be able to reach its folder: a private temporary folder (the test
    // run's own, mode 0700) gets search permission for others, nothing more.
    const parent = tmpdir();
    if ((statSync(parent).mode & 0o001) === 0) chmodSync(parent, statSync(parent).mode | 0o111);
    const pw = Bun.spawnSync(['id', '-u', asUser]).stdout.toString().trim();
    const gr = Bun.spawnSync(['id', '-g', asUser]).stdout.toString().trim();
    chownSync(dir, Number(pw), Number(gr));
  }
  const data = join(dir, 'data');
  const port = freePort();
  try {
    await run(
      [
        join(bin, 'initdb'),
        '-D',
        data,
        '-U',
        'lume',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
      ],
      asUser,
    );
    await run(
      [
        join(bin, 'pg_ctl'),
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-w',
        '-t',
        '60',
        'start',
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} ${opts.durable ? '' : '-c fsync=off -c synchronous_commit=off -c full_page_writes=off'} -c max_connections=200`,
      ],
      asUser,
    );
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const base = `postgres://lume@127.0.0.1:${port}`;
  await run(
    [join(bin, 'createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'lume', 'lume'],
    undefined,
  );
  let stopped = false;
  return {
    url: `${base}/lume`,
    port,
    dir,
    async createDatabase(name) {
      if (!/^[a-z][a-z0-9_]{0,40}$/.test(name)) throw new Error(`bad database name ${name}`);
      await run(
        [join(bin, 'createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'lume', name],
        undefined,
      );
      return `${base}/${name}`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'], asUser).catch(
        () => {},
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
