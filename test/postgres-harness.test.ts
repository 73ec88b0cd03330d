/**
 * The throw-away PostgreSQL cluster the store suites run on: it starts on a free loopback port,
 * answers queries through Bun.sql, gives each suite its own database, and leaves nothing behind.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { SQL } from 'bun';
import { startPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('a cluster starts, serves Bun.sql on loopback, and is removed on stop', async () => {
  const pg = await startPostgres();
  try {
    const sql = new SQL(pg.url);
    const [row] =
      await sql`select 40 + 2 as answer, current_user as who, inet_server_addr()::text as addr`;
    expect([row.answer, row.who, row.addr]).toEqual([42, 'lume', '127.0.0.1/32']);
    const other = new SQL(await pg.createDatabase('suite_a'));
    const [db] = await other`select current_database() as name`;
    expect(db.name).toBe('suite_a');
    await Promise.all([sql.close(), other.close()]);
  } finally {
    await pg.stop();
  }
  expect(existsSync(pg.dir)).toBe(false);
  // Nothing listens on the port any more.
  expect(
    await fetch(`http://127.0.0.1:${pg.port}/`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused');
}, 60_000); // initdb and a first start take seconds on a loaded machine
