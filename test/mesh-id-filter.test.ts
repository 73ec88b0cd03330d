/**
 * The SQLite mesh store looks a new message's id up in the database only when its filter of
 * stored ids (lib/mesh/id-filter.ts) may hold it: the filter never forgets an id, and a retry is
 * still answered with the stored message after the store is opened again on its file.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { createIdFilter } from '../lib/mesh/id-filter.ts';
import { encodeText } from '../lib/mesh/payload.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import type { MessageDraft } from '../lib/mesh/store.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('the filter holds every id it was given, past its first size, and few it was not', () => {
  const filter = createIdFilter();
  const before = filter.bytes;
  const ids = Array.from({ length: 200_000 }, (_, i) => `m-${i}-${crypto.randomUUID()}`);
  for (const id of ids) filter.add(id);
  expect(ids.filter((id) => !filter.mayHave(id))).toEqual([]);
  expect(filter.bytes).toBeGreaterThan(before); // it grew a layer instead of filling up
  let strangers = 0;
  for (let i = 0; i < 100_000; i++) if (filter.mayHave(`x-${crypto.randomUUID()}`)) strangers++;
  expect(strangers).toBeLessThan(1_000); // about 1 in 700 at worst: each costs one lookup
});

const draft = (id: string, body: string): MessageDraft => ({
  project: 'p',
  from: { name: 'alice', presenceId: 'p-1' },
  messageId: id,
  target: { type: 'project' },
  payload: encodeText(body),
  attachments: [],
});

test('a retried id is answered with the stored message after the store opens again, never stored twice', async () => {
  const dir = tempDir('lume-a2a-mesh-ids-');
  const file = join(dir, 'mesh.sqlite');
  const open = () => createSqliteMeshStore({ db: openMeshDatabase(file), log: silentLog });
  const first = open();
  await first.createProject({ name: 'p' });
  const sent = await Promise.all(['a', 'b', 'c'].map((id) => first.append(draft(id, `hi ${id}`))));
  expect(sent.map((r) => r.ok && r.result.message.sequence)).toEqual([1, 2, 3]);
  await first.close();

  const again = open();
  const retried = await Promise.all(
    ['a', 'b', 'c'].map((id) => again.append(draft(id, `hi ${id}`))),
  );
  expect(retried.map((r) => r.ok && [r.result.message.sequence, r.result.replayed])).toEqual([
    [1, true],
    [2, true],
    [3, true],
  ]);
  const changed = await again.append(draft('b', 'something else'));
  expect(!changed.ok && changed.error.code).toBe('message_id_conflict');
  const fresh = await again.append(draft('d', 'hi d'));
  expect(fresh.ok && [fresh.result.message.sequence, fresh.result.replayed]).toEqual([4, false]);
  expect(await again.count('p')).toBe(4);
  await again.close();
  rmSync(dir, { recursive: true, force: true });
});
