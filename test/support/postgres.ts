/**
 * @module test/support/postgres — a throw-away PostgreSQL cluster for the tests that run a store
 * on PostgreSQL: `initdb` in a temporary folder, a free loopback port, trust authentication for
 * one user, fsync off; `stop()` ends the server and removes the folder. As root (CI), the server
 * runs as the unprivileged `postgres` user Debian's package creates, since PostgreSQL refuses root.
 */

import { SQL } from 'bun';
import { reservePorts } from './ports.ts';
import { processFolder } from './run-scope.ts';
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

async function run(
  argv: string[],
  asUser: string | undefined,
  env: Record<string, string | undefined>,
): Promise<void> {
  const cmd = asUser ? ['runuser', '-u', asUser, '--', ...argv] : argv;
  const proc = Bun.spawn(cmd, {
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: Object.keys(env).length ? env : process.env,
  });
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

/** Where a cluster lives, who runs it and with what environment. */
interface Place {
  dir: string;
  asUser: string | undefined;
  env: Record<string, string | undefined>;
}

/** A folder for a cluster inside `parent`, reachable by the server's user. */
function place(parent: string, env: Record<string, string | undefined>): Place {
  const asUser = userInfo().uid === 0 ? 'postgres' : undefined;
  const dir = mkdtempSync(join(parent, 'lume-a2a-pg-'));
  if (asUser) {
    // The server's user must be able to reach its folder: a private temporary folder (the test
    // run's own, mode 0700) gets search permission for others, nothing more.
    if ((statSync(parent).mode & 0o001) === 0) chmodSync(parent, statSync(parent).mode | 0o111);
    const pw = Bun.spawnSync(['id', '-u', asUser]).stdout.toString().trim();
    const gr = Bun.spawnSync(['id', '-g', asUser]).stdout.toString().trim();
    chownSync(dir, Number(pw), Number(gr));
  }
  return { dir, asUser, env };
}

/** `initdb`, `pg_ctl start` and the database `lume`, in `at`. */
async function startCluster(at: Place, opts: StartOptions): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed: apt-get install -y postgresql (.ci/setup does this)',
    );
  const { dir, asUser, env } = at;
  const data = join(dir, 'data');
  const port = freePort();
  try {
    await run(
      [
        join(bin, 'initdb'),
        ...['-D', data, '-U', 'lume', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      ],
      asUser,
      env,
    );
    const fast = '-c fsync=off -c synchronous_commit=off -c full_page_writes=off';
    await run(
      [
        join(bin, 'pg_ctl'),
        ...['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start', '-o'],
        `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} ${opts.durable ? '' : fast} -c max_connections=200`,
      ],
      asUser,
      env,
    );
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const base = `postgres://lume@127.0.0.1:${port}`;
  const createdb = (name: string) =>
    run(
      [join(bin, 'createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'lume', name],
      undefined,
      env,
    );
  await createdb('lume');
  let stopped = false;
  return {
    url: `${base}/lume`,
    port,
    dir,
    async createDatabase(name) {
      if (!/^[a-z][a-z0-9_]{0,40}$/.test(name)) throw new Error(`bad database name ${name}`);
      await createdb(name);
      return `${base}/${name}`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await run(
        [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'],
        asUser,
        env,
      ).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a cluster of its own, in the file's temporary folder. Throws with what to install when
 * Debian's `postgresql` is missing (`.ci/setup` installs it).
 */
export function startPostgres(opts: StartOptions = {}): Promise<TestPostgres> {
  return startCluster(place(tmpdir(), {}), opts);
}

/** A test file's databases in the process's shared cluster. */
export interface FilePostgres {
  port: number;
  /** A fresh, empty database, named `name` and a number unique in the cluster: its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops the file's databases (ending their connections); the cluster stays for the next file. */
  release(): Promise<void>;
}

let shared: Promise<TestPostgres> | undefined;
let databases = 0;
/** Held open for the process's life: its end (also by SIGKILL) tells the guard to stop the cluster. */
let guard: Bun.Subprocess<'pipe', 'ignore', 'ignore'> | undefined;

/**
 * The test process's cluster, started on first use and shared by the files that run in it (an
 * `initdb` and a start cost seconds; a file's isolation is its own databases). A guard process
 * waits on a pipe from this process and, once it closes, stops the cluster and removes its
 * folder, so the cluster ends with the process however it ends. Cluster and guard run in a
 * folder of the process, not of a file, so a file's leak check does not take them for its own.
 */
export async function sharedPostgres(): Promise<FilePostgres> {
  shared ??= (async () => {
    const home = processFolder('postgres');
    const at = place(home, { PATH: process.env.PATH, TMPDIR: home, HOME: home });
    const pg = await startCluster(at, {});
    const stop = `${join(postgresBinDir()!, 'pg_ctl')} -D ${join(pg.dir, 'data')} -m immediate -w stop`;
    guard = Bun.spawn(
      [
        'sh',
        '-c',
        `cat >/dev/null; ${at.asUser ? `runuser -u ${at.asUser} -- ` : ''}${stop}; rm -rf ${pg.dir}`,
      ],
      { stdin: 'pipe', stdout: 'ignore', stderr: 'ignore', env: at.env },
    );
    guard.unref();
    return pg;
  })();
  const pg = await shared;
  const mine: string[] = [];
  return {
    port: pg.port,
    async createDatabase(name) {
      const unique = `${name}_${++databases}`;
      mine.push(unique);
      return pg.createDatabase(unique);
    },
    async release() {
      if (!mine.length) return;
      const sql = new SQL(pg.url, { max: 1 });
      try {
        for (const name of mine.splice(0))
          await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await sql.close();
      }
    },
  };
}
