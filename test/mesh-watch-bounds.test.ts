/**
 * The mesh's `/v1/watch` bounded: past the per-address or the per-process bound of open watch
 * streams a new one is refused 503 `watch-full` (other addresses still watch up to the process's
 * bound), and a roster change told to many watchers is serialised once, every watcher reading the
 * same frame.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import http from 'node:http';
import { createProject, join, startHub, type TestHub } from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

let hub: TestHub;
const open: (() => void)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) close();
  await hub?.stop();
});

/** An open `/v1/watch` answer: its status, and what its body holds once it holds `text`. */
interface Watch {
  status: number;
  until(text: string): Promise<string>;
}

/** Opens `/v1/watch` from `localAddress` (node:http, which can pick the local address). */
function watchFrom(localAddress: string, project = 'demo') {
  return new Promise<Watch>((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port: hub.port, path: `/v1/watch?project=${project}`, localAddress },
      (res) => {
        open.push(() => req.destroy());
        res.setEncoding('utf8');
        let body = '';
        let waiting: { text: string; done: (b: string) => void }[] = [];
        const settle = () => {
          waiting = waiting.filter((w) => !body.includes(w.text) || (w.done(body), false));
        };
        res.on('data', (chunk: string) => {
          body += chunk;
          settle();
        });
        res.on('end', () => {
          for (const w of waiting) w.done(body);
        });
        resolve({
          status: res.statusCode!,
          until: (text) =>
            new Promise((done) => {
              waiting.push({ text, done });
              settle();
            }),
        });
      },
    );
    req.on('error', () => {});
  });
}

test('watch streams past the per-address and per-process bounds are refused watch-full', async () => {
  hub = startHub({ limits: { maxWatchers: 3, maxWatchersPerAddress: 2 } });
  await createProject(hub, 'demo');
  const a1 = await watchFrom('127.0.0.1');
  const a2 = await watchFrom('127.0.0.1');
  expect([a1.status, a2.status]).toEqual([200, 200]);
  const a3 = await watchFrom('127.0.0.1');
  expect(a3.status).toBe(503);
  expect(JSON.parse(await a3.until('}}')).error.code).toBe('watch-full');
  const b1 = await watchFrom('127.0.0.2');
  expect(b1.status).toBe(200);
  expect(await b1.until('"type":"roster"')).toContain('"peers":[]');
  const c1 = await watchFrom('127.0.0.3');
  expect(c1.status).toBe(503);
  expect(JSON.parse(await c1.until('}}')).error.message).toContain(
    'the hub has 3 watch streams open',
  );
  expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
});

test('a roster change told to 50 watchers is serialised once; each reads the same frame', async () => {
  hub = startHub({ limits: { maxWatchers: 100, maxWatchersPerAddress: 100 } });
  await createProject(hub, 'demo');
  const watchers = await Promise.all(Array.from({ length: 50 }, () => watchFrom('127.0.0.1')));
  await Promise.all(watchers.map((w) => w.until('"type":"roster"')));
  const stringify = JSON.stringify;
  let rosters = 0;
  JSON.stringify = ((value: unknown, ...rest: never[]) => {
    if ((value as { type?: unknown } | null)?.type === 'roster') rosters++;
    return stringify(value, ...rest);
  }) as typeof JSON.stringify;
  let bodies: string[];
  try {
    await join(hub, 'demo', 'alice');
    bodies = await Promise.all(watchers.map((w) => w.until('"name":"alice"')));
  } finally {
    JSON.stringify = stringify;
  }
  expect(rosters).toBe(1);
  expect(new Set(bodies).size).toBe(1);
});
