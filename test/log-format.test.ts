/**
 * LOG_FORMAT=json and the OTLP settings on a real hub process: every line it logs is one JSON
 * object (time, level, logger, msg, fields; the W3C ids of the request being served), no key or
 * token given to it appears in any line, and it exports its trace to a receiver this test runs.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { consoleLog, redactFields, REDACTED } from '../lib/log.ts';
import { childContext } from '../lib/telemetry/trace-context.ts';
import { bunCommand } from './support/bundle.ts';
import { tempDir } from './support/node.ts';
import { checkOtlpRequest, startOtlpReceiver } from './support/otlp.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = resolve(import.meta.dir, '..');
const receiver = startOtlpReceiver();
const dataDir = tempDir('lume-a2a-logjson-');
afterAll(() => {
  receiver.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Each line of `text` parsed as JSON (a plain line fails the parse, and so the test). */
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });

const SECRETS = {
  mesh: 'mesh-token-4f1c9e2d',
  model: 'sk-model-key-8a7b6c5d',
  collector: 'collector-key-1e2f3a4b',
};

test('a hub with LOG_FORMAT=json writes one JSON object per line, no secret in any, and exports over OTLP', async () => {
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' }],
    }),
  );
  const proc = Bun.spawn(bunCommand(['hub/main.ts']), {
    cwd: root,
    env: {
      ...process.env,
      FLEET_FILE: fleetFile,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      MESH_TOKEN: SECRETS.mesh,
      MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
      MODEL_NAME: 'm',
      MODEL_API_KEY: SECRETS.model,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${SECRETS.collector}`,
      OTEL_SERVICE_NAME: 'hub-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '10',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const stderr = new Response(proc.stderr).text();
  const reader = proc.stdout.getReader();
  let out = '';
  let url: string | undefined;
  // Its stdout is JSON too: the listening line names its URL in a field.
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the hub exited: ${await stderr}`);
    out += new TextDecoder().decode(value);
    url = jsonLines(out).find((o) => o.msg.startsWith('hub listening on'))?.fields.url;
  }

  // scanner is not running: the call fails, is traced, logged and exported.
  const trace = childContext().traceId;
  const res = await fetch(`${url}/api/local-invoke`, {
    method: 'POST',
    headers: {
      origin: url,
      'content-type': 'application/json',
      traceparent: `00-${trace}-00f067aa0ba902b7-01`,
      authorization: `Bearer ${SECRETS.mesh}`,
    },
    body: JSON.stringify({ target: 'scanner', capability: 'sector.movement', args: {} }),
  });
  expect(res.status).toBe(502);
  const [span] = await receiver.waitFor(trace, 1);
  expect(span).toMatchObject({
    traceId: trace,
    parentSpanId: '00f067aa0ba902b7',
    name: 'sector.movement',
    kind: 3,
    status: { code: 2, message: 'PEER_UNREACHABLE' },
  });
  for (const r of receiver.requests) checkOtlpRequest(r.body);
  expect(receiver.requests.at(-1)!.body.resourceSpans[0].resource.attributes).toContainEqual({
    key: 'service.name',
    value: { stringValue: 'hub-under-test' },
  });

  proc.kill('SIGTERM');
  await proc.exited;
  for (let r = await reader.read(); !r.done; r = await reader.read())
    out += new TextDecoder().decode(r.value);
  // Every stdout line is a JSON log line: the self-check (counting what it says), listening, console.
  const printed = jsonLines(out);
  expect(printed.map((o) => o.msg.split(':')[0])).toEqual([
    'self-check a2a card OK',
    'self-check a2a catalog OK',
    'self-check a2a keys OK',
    'self-check a2a data OK',
    'self-check a2a model WARN',
    'hub listening on http',
    'console',
  ]);
  const [card, catalog] = printed as { fields: { detail: string } }[];
  const skills = Number(/^(\d+) skills/.exec(card!.fields.detail)?.[1]);
  expect(catalog!.fields).toMatchObject({
    check: 'catalog',
    status: 'ok',
    detail: `${skills} capabilities; 1 probe answered (negotiation.list)`,
  });
  expect(printed.at(-1)!.fields.console).toStartWith(`${url}/login?ticket=`);
  for (const o of printed) expect(o.logger).toBe('hub');
  const text = await stderr;
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThanOrEqual(2);
  for (const line of lines) {
    const o = JSON.parse(line);
    expect(Object.keys(o).filter((k) => !['trace_id', 'span_id'].includes(k))).toEqual([
      'time',
      'level',
      'logger',
      'msg',
      'fields',
    ]);
    expect(new Date(o.time).toISOString()).toBe(o.time);
    expect(['debug', 'info', 'warn', 'error']).toContain(o.level);
    expect(o.logger).toBe('hub');
    expect(typeof o.msg).toBe('string');
    expect(typeof o.fields).toBe('object');
    for (const secret of Object.values(SECRETS)) expect(line).not.toContain(secret);
  }
  // The failed call's log line names the trace it belongs to.
  expect(
    lines
      .map((l) => JSON.parse(l))
      .some((o) => o.msg === 'peer call failed' && o.trace_id === trace),
  ).toBe(true);
  // Nor did the collector's key reach the exported spans.
  expect(JSON.stringify(receiver.requests)).not.toContain(SECRETS.collector);
});

test('a node with LOG_FORMAT=json writes nothing but JSON lines, on stdout and stderr', async () => {
  const fleetFile = join(dataDir, 'node-fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' }],
    }),
  );
  const proc = Bun.spawn(bunCommand(['node/main.ts', '--name', 'scanner', '--port', '0']), {
    cwd: root,
    env: {
      ...process.env,
      FLEET_FILE: fleetFile,
      DATA_DIR: join(dataDir, 'node'),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const stderr = new Response(proc.stderr).text();
  const reader = proc.stdout.getReader();
  let out = '';
  // The self-check's last line (data) ends what the node prints at start.
  while (!jsonLines(out).some((o) => o.fields?.check === 'data')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the node exited: ${await stderr}`);
    out += new TextDecoder().decode(value);
  }
  const url = jsonLines(out).find((o) => o.msg.startsWith('scanner listening on'))!.fields.url;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  proc.kill('SIGTERM');
  await proc.exited;
  for (let r = await reader.read(); !r.done; r = await reader.read())
    out += new TextDecoder().decode(r.value);
  const printed = jsonLines(out);
  expect(printed.map((o) => o.msg.replace(/:.*$/, ''))).toEqual([
    'scanner listening on http',
    'self-check scanner card OK',
    'self-check scanner catalog OK',
    'self-check scanner keys OK',
    'self-check scanner data OK',
  ]);
  const logged = jsonLines(await stderr);
  expect(logged.length).toBeGreaterThan(0);
  for (const o of [...printed, ...logged]) {
    expect(Object.keys(o)).toEqual(['time', 'level', 'logger', 'msg', 'fields']);
    expect(o.logger).toBe('scanner');
  }
});

test('fields named for secrets are redacted, bearer credentials cut out of text, in both formats', () => {
  expect(
    redactFields({
      apiKey: 'k1',
      token: 't1',
      MODEL_API_KEY: 'k2',
      password: 'p',
      authorization: 'Bearer abc',
      signature: 's',
      cookies: 'c',
      seen: true,
      note: 'sent Bearer abc.def to it',
      db: 'postgres://lume:pw-9x@db:5432/mesh',
      n: 3,
      keyCount: 2,
    }),
  ).toEqual({
    apiKey: REDACTED,
    token: REDACTED,
    MODEL_API_KEY: REDACTED,
    password: REDACTED,
    authorization: REDACTED,
    signature: REDACTED,
    cookies: REDACTED,
    seen: true,
    note: `sent Bearer ${REDACTED} to it`,
    db: `postgres://lume:${REDACTED}@db:5432/mesh`,
    n: 3,
    keyCount: 2,
  });
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((s: string) => (written.push(s), true)) as typeof process.stderr.write;
  try {
    consoleLog('t', 'info', 'json')('info', 'header was Bearer zz9', { secretKey: 'zz9', ok: 1 });
    consoleLog('t', 'info', 'text')('info', 'plain', { token: 'zz9' });
  } finally {
    process.stderr.write = write;
  }
  expect(JSON.parse(written[0]!)).toMatchObject({
    level: 'info',
    logger: 't',
    msg: `header was Bearer ${REDACTED}`,
    fields: { secretKey: REDACTED, ok: 1 },
  });
  expect(written[1]).toEndWith(`info t plain token="${REDACTED}"\n`);
  expect(written.join('')).not.toContain('zz9');
});

test('secrets are cut out of text, words are not', () => {
  const token = 'lume_Qm9keSBvZiBhIHRva2VuIHRoYXQgaXMgbG9uZyBlbm91Z2g';
  const said = (text: string) => redactFields({ text }).text;
  // Words stay: the sentence reads as written.
  for (const text of [
    'The bearer token is not valid here',
    'a bearer credential is needed: bun run keys token add <name>',
    'api key rotation done; 3 keys in the ring',
    'keyCount=3 tokens=none',
  ])
    expect(said(text)).toBe(text.replace('tokens=none', `tokens=${REDACTED}`));
  // Secrets go: a token after Bearer, keys by their form, key material, named values, URL passwords.
  expect(said(`Authorization: Bearer ${token}`)).toBe(`Authorization: Bearer ${REDACTED}`);
  expect(said('sent Bearer eyJhbGciOi.eyJzdWIi.c2ln')).toBe(`sent Bearer ${REDACTED}`);
  expect(said('Bearer AbCdEfGh')).toBe(`Bearer ${REDACTED}`);
  expect(said(`the token ${token} expired`)).toBe(`the token ${REDACTED} expired`);
  expect(said('model said: invalid key sk-proj-Ab12Cd34Ef56Gh78Ij90')).toBe(
    `model said: invalid key ${REDACTED}`,
  );
  expect(said('MODEL_API_KEY=abc123 set')).toBe(`MODEL_API_KEY=${REDACTED} set`);
  expect(said('{"privateKey":"c2VlZCBieXRlcw","kid":"ed25519:ab"}')).toBe(
    `{"privateKey":"${REDACTED}","kid":"ed25519:ab"}`,
  );
  expect(said('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY----- read')).toBe(
    `${REDACTED} read`,
  );
  expect(said('postgres://lume:pw-9x@db:5432/mesh')).toBe(
    `postgres://lume:${REDACTED}@db:5432/mesh`,
  );
});
