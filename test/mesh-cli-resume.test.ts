/**
 * A `bun run mesh connect` killed with SIGKILL mid-stream, then started again: it replays only
 * the messages it never printed. Real CLI processes against a real hub on port 0, the connection
 * remembered (`MESH_PERSIST_CONNECTIONS=1`) with its position written just after each message is
 * printed, not only when the connection drops cleanly.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { join, text } from './support/mesh.ts';
import { meshCliHub } from './support/mesh-cli.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): two CLI processes and a hub on a busy machine

const cli = meshCliHub();
/** `bun run mesh connect demo --as alice` as a user runs it, stdin held open. */
const connect = () => cli.run(['connect', 'demo', '--as', 'alice']);

test('a connect killed with SIGKILL replays only what it never printed', async () => {
  const bob = await join(cli.hub, 'demo', 'bob');
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
  const file = joinPath(cli.dataDir, 'mesh', 'connections.json');
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
