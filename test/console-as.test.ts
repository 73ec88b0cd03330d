/**
 * `bun run console-url --as <token name>` against a real hub process: the URL signs the browser in
 * as that token's user, so the console's task list (the A2A HTTP+JSON `GET /tasks` it reads with
 * its session) shows the tasks that user made with the token, and not the plain console's; a
 * name without a token is refused by the command, an edited name by the hub, and revoking the
 * token ends the session.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addToken, revokeToken } from '../lib/auth/tokens.ts';
import { bunCommand } from './support/bundle.ts';
import { signInAt } from './support/console-session.ts';
import { tempDir } from './support/node.ts';
import { ROOT } from './support/processes.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a real hub process and a CLI

const dataDir = tempDir('lume-a2a-console-as-');
const fleetFile = join(dataDir, 'fleet.json');
let hub: ServingProcess;
let alice: string;

beforeAll(async () => {
  writeFileSync(
    fleetFile,
    JSON.stringify({ hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' }, nodes: [] }),
  );
  alice = addToken(dataDir, 'alice');
  addToken(dataDir, 'bob');
  hub = await startProcess('hub/main.ts', [], { PORT: '0' }, { dataDir, fleetFile });
});
afterAll(async () => {
  await hub.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function consoleUrl(...args: string[]): Promise<[number, string, string]> {
  const p = Bun.spawn(bunCommand(['hub/cli/console-url.ts', ...args]), {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, FLEET_FILE: fleetFile, PORT: new URL(hub.url).port },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, out, err] = await Promise.all([
    p.exited,
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
  ]);
  return [code, out.trim(), err];
}

const tasksOf = async (headers: Record<string, string>) => {
  const res = await fetch(`${hub.url}/tasks`, { headers: { 'a2a-version': '1.0', ...headers } });
  return ((await res.json()) as { tasks: { id: string }[] }).tasks.map((t) => t.id);
};

describe('bun run console-url --as', () => {
  test("signs in as the token's user: the console lists that user's tasks", async () => {
    const sent = await fetch(`${hub.url}/message:send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      },
      body: JSON.stringify({
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] },
      }),
    });
    const id = ((await sent.json()) as { task: { id: string } }).task.id;
    const [code, url] = await consoleUrl('--as', 'alice');
    expect(code).toBe(0);
    expect(url).toMatch(/\.alice$/);
    const session = await signInAt(url);
    expect(
      await fetch(`${hub.url}/api/session`, { headers: session.headers }).then((r) => r.json()),
    ).toEqual({ principal: { kind: 'session', name: 'alice' } });
    expect(await tasksOf(session.headers)).toContain(id);
    // The plain console URL signs in as console, who does not see alice's task.
    const [, plain] = await consoleUrl();
    expect(await tasksOf((await signInAt(plain)).headers)).not.toContain(id);
    // Revoking the token ends the session made for it (the hub re-reads the token file each second).
    revokeToken(dataDir, 'alice');
    const whoIs = async () =>
      ((await (await fetch(`${hub.url}/api/session`, { headers: session.headers })).json()) as any)
        .principal?.name;
    let name = await whoIs();
    for (let i = 0; i < 40 && name === 'alice'; i++) {
      await Bun.sleep(100); // polls for the file's re-read; bounded at 4 s
      name = await whoIs();
    }
    expect(name).not.toBe('alice');
  });

  test('a name without a token is refused by the command; an edited name by the hub', async () => {
    const [code, , err] = await consoleUrl('--as', 'nobody');
    expect(code).toBe(2);
    expect(err).toContain('has no token');
    const [, url] = await consoleUrl('--as', 'bob');
    const edited = url.replace(/\.bob$/, '.alice');
    expect((await fetch(edited, { redirect: 'manual' })).status).toBe(401);
    const res = await fetch(url.replace(/\.bob$/, ''), { redirect: 'manual' });
    expect(res.status).toBe(401);
  });
});
