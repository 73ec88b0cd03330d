/**
 * The one config file and its environment overrides: defaults with no file, the same settings
 * read from JSON, YAML and TOML, every variable over the file, per-node models, refusals that name
 * the setting, a real hub process started from a config file (and refusing a broken one), the
 * README's table against the settings and the entry files' variables, and `bun run mesh
 * disconnect` ending a remembered connection.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSettings } from '../lib/config.ts';
import { SETTINGS } from '../lib/config/settings-table.ts';
import { createMeshClient } from '../lib/mesh/client.ts';
import { createHubClient } from '../lib/mesh/http-client.ts';
import { memoryConnectionMemory } from '../lib/mesh/memory.ts';
import { silentLog } from '../lib/log.ts';
import { runMeshCli } from '../hub/mesh/cli.ts';
import { startHub } from './support/mesh.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const dirs: string[] = [];
const folder = (files: Record<string, string> = {}) => {
  const d = tempDir('lume-a2a-config-');
  dirs.push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('no file and no variables: every default, the mesh project main', () => {
  const cwd = folder();
  const s = loadSettings({ env: {}, cwd });
  expect(s.file).toBeUndefined();
  expect(s.fleet).toEqual({}); // the supervisor's own defaults: a probe a second, 3 s to answer
  expect([s.dataDir, s.logLevel, s.pushAllowHosts, s.hub.host, s.hub.port, s.hub.maxPort]).toEqual([
    join(cwd, 'data'),
    'info',
    [],
    '127.0.0.1',
    undefined,
    undefined,
  ]);
  expect(s.mesh).toEqual({
    project: 'main',
    agentId: 'main',
    name: 'main',
    autoConnect: false,
    rememberConnections: false,
    reconnectMs: 500,
    inboxMessages: 64,
  });
  expect(s.modelFor('lan')).toEqual({ model: 'gpt-4o-mini', pingMs: 30_000 });
});

const yaml = `hub:
  host: 127.0.0.2
  port: 43123
  maxPort: 43223
mesh:
  project: ops
  agentId: desk
  autoConnect: true
  rememberConnections: true
  reconnectMs: 250
models:
  default:
    baseUrl: http://127.0.0.1:9/v1
    model: small
  lan:
    model: reasoning
    agent: model
    apiKeyEnv: LAN_KEY
`;
const json = JSON.stringify({
  hub: { host: '127.0.0.2', port: 43123, maxPort: 43223 },
  mesh: {
    project: 'ops',
    agentId: 'desk',
    autoConnect: true,
    rememberConnections: true,
    reconnectMs: 250,
  },
  models: {
    default: { baseUrl: 'http://127.0.0.1:9/v1', model: 'small' },
    lan: { model: 'reasoning', agent: 'model', apiKeyEnv: 'LAN_KEY' },
  },
});
const toml = `[hub]
host = "127.0.0.2"
port = 43123
maxPort = 43223
[mesh]
project = "ops"
agentId = "desk"
autoConnect = true
rememberConnections = true
reconnectMs = 250
[models.default]
baseUrl = "http://127.0.0.1:9/v1"
model = "small"
[models.lan]
model = "reasoning"
agent = "model"
apiKeyEnv = "LAN_KEY"
`;

test('the same settings from lume.config.json, .yaml and .toml', () => {
  for (const [name, text] of [
    ['lume.config.json', json],
    ['lume.config.yaml', yaml],
    ['lume.config.toml', toml],
  ] as const) {
    const cwd = folder({ [name]: text });
    const s = loadSettings({ env: { LAN_KEY: 'sk-lan' }, cwd });
    expect(s.file).toBe(join(cwd, name));
    expect(s.hub).toEqual({ host: '127.0.0.2', port: 43123, maxPort: 43223 });
    expect(s.mesh).toEqual({
      project: 'ops',
      agentId: 'desk',
      name: 'desk',
      autoConnect: true,
      rememberConnections: true,
      reconnectMs: 250,
      inboxMessages: 64,
    });
    // A node's own entry over the shared default; the key from the variable the file names.
    expect(s.modelFor('lan')).toEqual({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'reasoning',
      apiKey: 'sk-lan',
      agent: 'model',
      pingMs: 30_000,
    });
    expect(s.modelFor('crm')).toEqual({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'small',
      pingMs: 30_000,
    });
  }
});

test('every variable overrides the file; per-node model variables win over shared ones', () => {
  const cwd = folder({ 'lume.config.yaml': yaml });
  const env = {
    HOST: '127.0.0.3',
    PORT: '5000',
    MAX_PORT: '5010',
    DATA_DIR: 'elsewhere',
    LOG_LEVEL: 'warn',
    PUSH_ALLOW_HOSTS: 'a.example, 10.0.0.0/8',
    MESH_PROJECT: 'other',
    MESH_AGENT_ID: 'me',
    MESH_NAME: 'Me',
    MESH_AUTO_CONNECT: 'false',
    MESH_REMEMBER_CONNECTIONS: '0',
    MESH_RECONNECT_MS: '900',
    MESH_TOKEN: 'tok',
    MESH_HUB_URL: 'http://127.0.0.1:1',
    PEER_PUBLIC_URL: 'http://pub.example',
    MESH_HEARTBEAT_MS: '2000',
    MODEL_NAME: 'shared-env',
    MODEL_LAN_NAME: 'lan-env',
    MODEL_AGENT: 'dynamic',
    MODEL_API_KEY: 'sk-env',
    MODEL_PING_MS: '1000',
  };
  const s = loadSettings({ env, cwd });
  expect(s.hub).toEqual({
    host: '127.0.0.3',
    port: 5000,
    maxPort: 5010,
    token: 'tok',
    heartbeatMs: 2000,
  });
  expect(s.mesh).toEqual({
    hubUrl: 'http://127.0.0.1:1',
    project: 'other',
    agentId: 'me',
    name: 'Me',
    autoConnect: false,
    rememberConnections: false,
    reconnectMs: 900,
    inboxMessages: 64,
  });
  expect([s.dataDir, s.logLevel, s.pushAllowHosts, s.publicUrl]).toEqual([
    join(cwd, 'elsewhere'),
    'warn',
    ['a.example', '10.0.0.0/8'],
    'http://pub.example',
  ]);
  expect(s.modelFor('lan')).toEqual({
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'lan-env',
    apiKey: 'sk-env',
    agent: 'dynamic',
    pingMs: 1000,
  });
  expect(s.modelFor('crm').model).toBe('shared-env');
  // LUME_CONFIG names a file anywhere.
  const other = folder({ 'x.toml': 'dataDir = "d"' });
  expect(loadSettings({ env: { LUME_CONFIG: join(other, 'x.toml') }, cwd }).dataDir).toBe(
    join(cwd, 'd'),
  );
});

test('a malformed or unknown setting is refused with its name', () => {
  const bad = (files: Record<string, string>, env: Record<string, string> = {}) => {
    try {
      loadSettings({ env, cwd: folder(files) });
      return 'accepted';
    } catch (e) {
      return (e as Error).message.replace(/^.*lume-a2a-config-[^/]+\//, '');
    }
  };
  expect(bad({ 'lume.config.yaml': 'hub:\n  prot: 1\n' })).toBe(
    'lume.config.yaml: unknown setting hub.prot',
  );
  expect(bad({ 'lume.config.json': '{"colour": 1}' })).toBe(
    'lume.config.json: unknown setting colour',
  );
  expect(bad({ 'lume.config.json': '{"hub": {"port": "eighty"}}' })).toBe(
    'lume.config.json: hub.port must be a port number (0-65535), got "eighty"',
  );
  expect(bad({ 'lume.config.json': '{"models": {"lan": {"agent": "smart"}}}' })).toStartWith(
    'lume.config.json: models.lan.agent must be model, dynamic or keyword',
  );
  expect(bad({ 'lume.config.json': '{"models": {"lan": {"key": "x"}}}' })).toStartWith(
    'lume.config.json: unknown setting models.lan.key',
  );
  expect(bad({ 'lume.config.json': '{not json' })).toStartWith('lume.config.json: cannot parse');
  expect(bad({}, { MAX_PORT: '70000' })).toBe(
    'MAX_PORT must be a port number (0-65535), got "70000"',
  );
  expect(bad({}, { MESH_AUTO_CONNECT: 'maybe' })).toBe(
    'MESH_AUTO_CONNECT must be true or false, got "maybe"',
  );
  // A liveness probe every millisecond would be a busy loop; a limit under half a second kills
  // children that are only slow.
  expect(bad({}, { FLEET_HEALTH_EVERY_MS: '50' })).toBe(
    'fleet.healthEveryMs (FLEET_HEALTH_EVERY_MS) must be at least 100, not 50',
  );
  expect(bad({ 'lume.config.json': '{"fleet": {"unresponsiveAfterMs": 100}}' })).toBe(
    'fleet.unresponsiveAfterMs (FLEET_UNRESPONSIVE_MS) must be at least 500, not 100',
  );
  expect(loadSettings({ env: { FLEET_UNRESPONSIVE_MS: '1500' }, cwd: folder({}) }).fleet).toEqual({
    unresponsiveAfterMs: 1500,
  });
  expect(bad({}, { LUME_CONFIG: 'missing.json' })).toBe(
    'LUME_CONFIG names missing.json, which does not exist',
  );
});

test('a real hub starts from a config file (port 0 walks nowhere) and refuses a broken one with the reason', async () => {
  const data = folder();
  const cwd = folder({
    'lume.config.yaml': `dataDir: ${data}\nhub:\n  port: 0\nmesh:\n  project: main\n`,
  });
  const hub = Bun.spawn({
    cmd: [process.execPath, join(ROOT, 'hub/main.ts')],
    cwd,
    env: { ...process.env, PORT: '', DATA_DIR: '' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const reader = hub.stdout.getReader();
    let out = '';
    while (!/listening on (\S+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const url = /listening on (\S+)/.exec(out)![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // Its data went where the file said.
    expect(readdirSync(join(data, 'hub'))).toContain('trace.sqlite');
  } finally {
    hub.kill();
    await hub.exited;
  }
  const broken = folder({ 'lume.config.json': '{"hub": {"maxPort": -1}}' });
  const refused = Bun.spawnSync({
    cmd: [process.execPath, join(ROOT, 'hub/main.ts')],
    cwd: broken,
    env: { ...process.env, DATA_DIR: '' },
  });
  expect(refused.exitCode).toBe(2);
  expect(refused.stderr.toString()).toContain('hub.maxPort must be a port number');
});

test('the README table lists every setting, and every variable the entry files read is a setting', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'));
  for (const row of SETTINGS) {
    expect(table).toContain(`\`${row.key}\``);
    expect(table).toContain(`\`${row.env}\``);
  }
  const entries = [
    'hub/main.ts',
    'node/main.ts',
    'hub/cli/fleet.ts',
    'hub/cli/mesh.ts',
    'hub/cli/keys.ts',
  ];
  const read = new Set(
    entries.flatMap((f) =>
      [
        ...readFileSync(join(ROOT, f), 'utf8').matchAll(/process\.env\.([A-Z_]+)|env\.([A-Z_]+)/g),
      ].map((m) => m[1] ?? m[2]!),
    ),
  );
  const known = new Set([...SETTINGS.map((r) => r.env), 'LUME_CONFIG']);
  for (const name of read) expect({ name, known: known.has(name) }).toEqual({ name, known: true });
  expect(table).toContain('`LUME_CONFIG`');
});

test('bun run mesh disconnect ends a remembered connection: the presence leaves and is forgotten', async () => {
  const hub = startHub();
  try {
    await hub.store.createProject({ name: 'main' });
    const memory = memoryConnectionMemory();
    // An agent connected earlier and is still present; its connection is remembered.
    const agent = createMeshClient({ hubUrl: hub.url, log: silentLog, memory });
    expect((await agent.connect('desk', 'main', 'desk')).state).toBe('connected');
    const http = createHubClient({ baseUrl: hub.url });
    const roster = async () => {
      const r = await http.presence('main');
      return r.ok ? r.result.map((p) => p.name) : [];
    };
    expect(await roster()).toEqual(['desk']);
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => err.push(l),
      hubUrl: hub.url,
      defaults: { agentId: 'desk', memory },
    };
    expect(await runMeshCli(['disconnect'], io)).toBe(0);
    expect(out).toEqual(['disconnected desk from main; the connection is forgotten']);
    expect(await roster()).toEqual([]);
    expect(await memory.load()).toEqual({});
    // Nothing left to end: a coded error.
    expect(await runMeshCli(['disconnect'], io)).toBe(1);
    expect(err).toEqual(['error A2A_CLIENT_CLOSED: no remembered connection for agent desk']);
    await agent.close();
  } finally {
    await hub.stop();
  }
});
