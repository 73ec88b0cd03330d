/**
 * A `bun run mesh connect` killed with SIGKILL mid-stream, then started again: it replays only
 * the messages it never printed. Real CLI processes against a real hub on port 0, the connection
 * remembered (`MESH_PERSIST_CONNECTIONS=1`) with its position written just after each message is
 * printed, not only when the connection drops cleanly.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { bunCommand } from './support/bundle.ts';
import { join, startHub, text, type TestHub } from './support/mesh.ts';
import { tempDir } from './support/node.ts';
import { lineReader, ROOT, waitFor } from './support/processes.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): two CLI processes and a hub on a busy machine

let hub: TestHub;
let dataDir: string;
beforeAll(async () => {
  hub = startHub();
  await hub.store.createProject({ name: 'demo' });
  dataDir = tempDir();
});
afterAll(async () => {
  await hub.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `bun run mesh connect demo --as alice` as a user runs it, stdin held open. */
function connect() {
  const proc = Bun.spawn(
    bunCommand(['hub/cli/mesh.ts', 'connect', 'demo', '--as', 'alice', '--hub', hub.url]),
    {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, MESH_PERSIST_CONNECTIONS: '1', LOG_LEVEL: 'warn' },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  return { proc, out: lineReader(proc.stdout) };
}

test('a connect killed with SIGKILL replays only what it never printed', async () => {
  const bob = await join(hub, 'demo', 'bob');
  let n = 0;
  const say = async (words: string) => {
    await bob.c.send({
      type: 'message',
      requestId: `r${++n}`,
      messageId: `bob-${n}`,
      target: { type: 'project' },
      payload: text(words),
      attachments: [],
    });
  };
  const file = joinPath(dataDir, 'mesh', 'connections.json');
  const first = connect();
  await first.out.until(/^connected to demo as alice/);
  for (const w of ['one', 'two', 'three']) await say(w);
  await first.out.until(/bob -> \*: three$/);
  // Written just after the line is printed: a kill between the two would replay that one line
  // (at least once, never lost). Without the write per message this never happens before a drop.
  await waitFor('the position after three on disk', () => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')).alice?.since === 3;
    } catch {
      return false;
    }
  });
  first.proc.kill('SIGKILL');
  await first.proc.exited;
  for (const w of ['four', 'five']) await say(w);

  const second = connect();
  try {
    await second.out.until(/bob -> \*: five$/);
    const printed = second.out.lines
      .map((l) => /bob -> \*: (\w+)$/.exec(l)?.[1])
      .filter((w) => w !== undefined);
    expect(printed).toEqual(['four', 'five']);
  } finally {
    second.proc.kill('SIGTERM');
    await second.proc.exited;
  }
});
