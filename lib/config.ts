/**
 * @module lib/config — the one configuration file (`lume.config.json`, `.yaml`/`.yml` or `.toml`,
 * parsed by Bun's own parsers) and the environment variables that override it. Entry files call
 * `loadSettings` once and pass plain values down; nothing else reads the file or the environment.
 * Every setting has a default, so no file at all is a valid configuration.
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';

/** How a node's messages are answered when a model is configured for it. */
export type AgentMode = 'model' | 'dynamic' | 'keyword';
export const AGENT_MODES: readonly AgentMode[] = ['model', 'dynamic', 'keyword'];

/** One node's (or the hub's) model: an OpenAI-compatible endpoint and how its agent uses it. */
export interface ModelSettings {
  baseUrl?: string;
  model: string;
  /** Never logged or shown; from `apiKey`, the variable `apiKeyEnv` names, or MODEL_API_KEY. */
  apiKey?: string;
  /** Absent: the node's own default (see each node file). */
  agent?: AgentMode;
  /** How often the model is pinged to tell whether it answers (ms). */
  pingMs: number;
}

export interface Settings {
  /** The file that was read, if any. */
  file?: string;
  dataDir: string;
  fleetFile?: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** `json`: one JSON object per log line. */
  logFormat: 'text' | 'json';
  pushAllowHosts: string[];
  publicUrl?: string;
  /** postgres://… keeps tasks in PostgreSQL (docs/scale-out.md); unset: JSON files under dataDir. */
  tasksDatabaseUrl?: string;
  /** The gRPC binding's port as written (a number, 0, or off); lib/a2a/grpc/port-setting.ts reads it. */
  grpcPort?: string;
  hub: {
    host: string;
    port?: number;
    maxPort?: number;
    token?: string;
    heartbeatMs?: number;
    heartbeatMisses?: number;
    recoveryMaxMessages?: number;
    socketBufferBytes?: number;
    meshDatabaseUrl?: string;
    meshLeaseMs?: number;
    /** Origins browsers reach the console at besides the loopback ones (docs/security.md); absent: none. */
    publicOrigins?: string[];
    /** The console signs in with a token even on loopback; absent: false. */
    requireLogin?: boolean;
  };
  /** Anonymous callers may also change state on a node (loopback only; conformance runs); absent: false. */
  a2aOpen?: boolean;
  /** A bearer token this process presents to the hub (`bun run fleet verify`). */
  token?: string;
  mesh: {
    hubUrl?: string;
    project: string;
    agentId: string;
    name: string;
    autoConnect: boolean;
    rememberConnections: boolean;
    reconnectMs: number;
    /** Turns a node's mesh inbox holds for its agent before it refuses (`failed`). */
    inboxMessages: number;
  };
  /** The model of a process named `name` (a node or the hub): file, then environment. */
  modelFor(name: string): ModelSettings;
}

type Kind = 'string' | 'port' | 'integer' | 'boolean' | 'list' | 'level' | 'format' | 'agent';

/** One setting: where it sits in the file, the variable that overrides it, its default, who reads it. */
export interface SettingRow {
  key: string;
  env: string;
  kind: Kind;
  default: string;
  readBy: string;
  description: string;
}

/** Every setting, in the order of the README's table. `models.<node>.*` rows stand for every node. */
export const SETTINGS: readonly SettingRow[] = [
  {
    key: 'dataDir',
    env: 'DATA_DIR',
    kind: 'string',
    default: './data',
    readBy: 'all',
    description: "Keys, tasks, jobs, the hub's databases, logs",
  },
  {
    key: 'fleetFile',
    env: 'FLEET_FILE',
    kind: 'string',
    default: 'fixtures/fleet.json',
    readBy: 'all',
    description: 'The fleet file: names, ports, node files',
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    kind: 'level',
    default: 'info',
    readBy: 'hub, node',
    description: 'debug, info, warn or error',
  },
  {
    key: 'logFormat',
    env: 'LOG_FORMAT',
    kind: 'format',
    default: 'text',
    readBy: 'hub, node, fleet',
    description: 'text, or json: one JSON object per log line',
  },
  {
    key: 'pushAllowHosts',
    env: 'PUSH_ALLOW_HOSTS',
    kind: 'list',
    default: '(none)',
    readBy: 'hub, node',
    description: 'Non-public webhook hosts, addresses or CIDR ranges allowed (comma-separated)',
  },
  {
    key: 'publicUrl',
    env: 'PEER_PUBLIC_URL',
    kind: 'string',
    default: '(bind address)',
    readBy: 'hub, node',
    description: 'The URL a card advertises (set it when binding 0.0.0.0)',
  },
  {
    key: 'tasksDatabaseUrl',
    env: 'TASKS_DATABASE_URL',
    kind: 'string',
    default: '(JSON files)',
    readBy: 'hub, node',
    description: 'Keep tasks in PostgreSQL (docs/scale-out.md)',
  },
  {
    key: 'hub.host',
    env: 'HOST',
    kind: 'string',
    default: '127.0.0.1',
    readBy: 'hub, node',
    description: 'Bind address',
  },
  {
    key: 'hub.port',
    env: 'PORT',
    kind: 'port',
    default: '(fleet file)',
    readBy: 'hub, node',
    description: "The hub's port (a node's with `bun run node`)",
  },
  {
    key: 'hub.maxPort',
    env: 'MAX_PORT',
    kind: 'port',
    default: '(= port)',
    readBy: 'hub',
    description: 'When the port is taken, try the next ones up to this',
  },
  {
    key: 'grpcPort',
    env: 'GRPC_PORT',
    kind: 'string',
    default: '(port + 1000)',
    readBy: 'hub, node',
    description:
      "The A2A gRPC binding's port: a number, 0 for any free one, off for none (`--grpc-port` for `bun run node`)",
  },
  {
    key: 'hub.token',
    env: 'MESH_TOKEN',
    kind: 'string',
    default: '(none)',
    readBy: 'hub, mesh CLI, node',
    description:
      'A token every hub route accepts (as the token `mesh`); set, the whole hub needs a principal (docs/security.md)',
  },
  {
    key: 'hub.publicOrigins',
    env: 'HUB_PUBLIC_ORIGIN',
    kind: 'list',
    default: '(loopback origins)',
    readBy: 'hub',
    description:
      'Origins browsers reach the console at, such as https://hub.example.com (comma-separated)',
  },
  {
    key: 'hub.requireLogin',
    env: 'HUB_REQUIRE_LOGIN',
    kind: 'boolean',
    default: 'false',
    readBy: 'hub',
    description: 'The console signs in with a token even on loopback (always beyond loopback)',
  },
  {
    key: 'a2aOpen',
    env: 'A2A_OPEN',
    kind: 'boolean',
    default: 'false',
    readBy: 'node',
    description:
      'Anonymous callers may also cancel, register webhooks and change state (loopback only; conformance runs)',
  },
  {
    key: 'token',
    env: 'LUME_TOKEN',
    kind: 'string',
    default: '(none)',
    readBy: 'fleet verify, negotiate',
    description:
      'A bearer token (`bun run keys token add`) the command-line clients send to the hub',
  },
  {
    key: 'hub.heartbeatMs',
    env: 'MESH_HEARTBEAT_MS',
    kind: 'integer',
    default: '10000',
    readBy: 'hub',
    description: 'Mesh heartbeat period',
  },
  {
    key: 'hub.heartbeatMisses',
    env: 'MESH_HEARTBEAT_MISSES',
    kind: 'integer',
    default: '2',
    readBy: 'hub',
    description: 'Unanswered heartbeats before a presence is dropped',
  },
  {
    key: 'hub.recoveryMaxMessages',
    env: 'MESH_RECOVERY_MAX_MESSAGES',
    kind: 'integer',
    default: '500',
    readBy: 'hub',
    description: 'Missed messages replayed at a reconnect',
  },
  {
    key: 'hub.socketBufferBytes',
    env: 'MESH_SOCKET_BUFFER_BYTES',
    kind: 'integer',
    default: '16777216',
    readBy: 'hub',
    description: 'Bytes a mesh socket may have unsent before its reader is cut as a slow consumer',
  },
  {
    key: 'hub.meshDatabaseUrl',
    env: 'MESH_DATABASE_URL',
    kind: 'string',
    default: '(SQLite file)',
    readBy: 'hub',
    description: 'Keep the mesh in PostgreSQL, shared by several hubs (docs/scale-out.md)',
  },
  {
    key: 'hub.meshLeaseMs',
    env: 'MESH_LEASE_MS',
    kind: 'integer',
    default: '(store default)',
    readBy: 'hub',
    description: "How long a hub's claim on a presence lasts without renewal, with a shared mesh",
  },
  {
    key: 'mesh.hubUrl',
    env: 'MESH_HUB_URL',
    kind: 'string',
    default: "(fleet file's hub)",
    readBy: 'mesh CLI, node',
    description:
      'The mesh hub the client connects to; several hubs of one cluster comma-separated, tried in turn',
  },
  {
    key: 'mesh.project',
    env: 'MESH_PROJECT',
    kind: 'string',
    default: 'main',
    readBy: 'mesh CLI, node',
    description: 'The project the client joins',
  },
  {
    key: 'mesh.agentId',
    env: 'MESH_AGENT_ID',
    kind: 'string',
    default: 'main',
    readBy: 'mesh CLI',
    description: 'The local agent a presence belongs to (key of a remembered connection)',
  },
  {
    key: 'mesh.name',
    env: 'MESH_NAME',
    kind: 'string',
    default: '(= agentId)',
    readBy: 'mesh CLI',
    description: 'Roster name',
  },
  {
    key: 'mesh.autoConnect',
    env: 'MESH_AUTO_CONNECT',
    kind: 'boolean',
    default: 'false',
    readBy: 'node',
    description: 'Each node joins the project under its own name at start',
  },
  {
    key: 'mesh.rememberConnections',
    env: 'MESH_REMEMBER_CONNECTIONS',
    kind: 'boolean',
    default: 'false',
    readBy: 'mesh CLI',
    description:
      "Remember each agent's connection (DATA_DIR/mesh/connections.json) to rejoin or disconnect it later",
  },
  {
    key: 'mesh.persistConnections',
    env: 'MESH_PERSIST_CONNECTIONS',
    kind: 'boolean',
    default: 'false',
    readBy: 'mesh CLI',
    description:
      'The same as mesh.rememberConnections (the name the mesh protocol uses); either turns it on',
  },
  {
    key: 'mesh.inboxMessages',
    env: 'MESH_INBOX_MESSAGES',
    kind: 'integer',
    default: '64',
    readBy: 'node',
    description:
      "Mesh messages waiting for a node's agent; past it a message is failed with the reason",
  },
  {
    key: 'mesh.reconnectMs',
    env: 'MESH_RECONNECT_MS',
    kind: 'integer',
    default: '500',
    readBy: 'mesh CLI, node',
    description: 'First reconnect delay (doubles to 10 s)',
  },
  {
    key: 'models.<node>.baseUrl',
    env: 'MODEL_BASE_URL',
    kind: 'string',
    default: '(no model)',
    readBy: 'hub, node',
    description: 'OpenAI-compatible endpoint (`models.default` applies to every node)',
  },
  {
    key: 'models.<node>.model',
    env: 'MODEL_NAME',
    kind: 'string',
    default: 'gpt-4o-mini',
    readBy: 'hub, node',
    description: 'Model name',
  },
  {
    key: 'models.<node>.apiKey',
    env: 'MODEL_API_KEY',
    kind: 'string',
    default: '(none)',
    readBy: 'hub, node',
    description: 'Key; never logged or shown. `apiKeyEnv` names another variable to read it from',
  },
  {
    key: 'models.<node>.agent',
    env: 'MODEL_AGENT',
    kind: 'agent',
    default: "(node's own)",
    readBy: 'node',
    description: 'model, dynamic or keyword (lan model, scanner dynamic, others keyword)',
  },
  {
    key: 'models.<node>.pingMs',
    env: 'MODEL_PING_MS',
    kind: 'integer',
    default: '30000',
    readBy: 'hub, node',
    description: 'How often the model is pinged; the card says agent-backed only while it answers',
  },
];

/** The largest config file read (1 MiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Names looked for in the working folder, in this order, when LUME_CONFIG names none. */
export const CONFIG_FILES = [
  'lume.config.json',
  'lume.config.yaml',
  'lume.config.yml',
  'lume.config.toml',
];
const MODEL_FIELDS = new Set(['baseUrl', 'model', 'apiKey', 'apiKeyEnv', 'agent', 'pingMs']);

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a config file's text by its extension. @throws Error naming the file and the problem */
export function parseConfigText(text: string, file: string): Doc {
  const ext = extname(file).toLowerCase();
  let doc: unknown;
  try {
    doc =
      ext === '.json'
        ? JSON.parse(text)
        : ext === '.toml'
          ? Bun.TOML.parse(text)
          : ext === '.yaml' || ext === '.yml'
            ? Bun.YAML.parse(text)
            : undefined;
  } catch (e) {
    throw new Error(`${file}: cannot parse: ${(e as Error)?.message ?? 'unknown error'}`);
  }
  if (doc === undefined) throw new Error(`${file}: use .json, .yaml, .yml or .toml`);
  if (doc === null || doc === '') return {};
  if (!isDoc(doc)) throw new Error(`${file}: the top level must be a mapping of settings`);
  return doc;
}

const envName = (node: string) => node.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * The settings: environment over file over default. `cwd` is where a config file is looked for.
 * @throws Error naming the setting (its file key or variable) that is malformed or unknown
 */
export function loadSettings(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
}): Settings {
  const { env } = opts;
  const named = env.LUME_CONFIG;
  const file = named
    ? resolve(opts.cwd, named)
    : CONFIG_FILES.map((f) => resolve(opts.cwd, f)).find((f) => existsSync(f));
  if (named && !existsSync(file!))
    throw new Error(`LUME_CONFIG names ${named}, which does not exist`);
  // A config file is a page of settings: one far larger is a mistake, refused before it is read.
  if (file && statSync(file).size > MAX_CONFIG_BYTES)
    throw new Error(
      `${file}: larger than ${MAX_CONFIG_BYTES} bytes; a config file holds settings only`,
    );
  const doc = file ? parseConfigText(readFileSync(file, 'utf8'), file) : {};
  checkKeys(doc, file ?? 'config');

  const fileValue = (key: string): unknown =>
    key.split('.').reduce<unknown>((v, k) => (isDoc(v) ? v[k] : undefined), doc);
  const where = (row: SettingRow, fromEnv: boolean) => (fromEnv ? row.env : `${file}: ${row.key}`);
  /** A setting's value: the variable when set (non-empty), else the file's, checked by kind. */
  const get = (key: string): unknown => {
    const row = SETTINGS.find((r) => r.key === key)!;
    const raw = env[row.env];
    const fromEnv = raw !== undefined && raw !== '';
    // The file's value is checked even when the variable overrides it: a file that is wrong
    // today is the setting of the next start without the variable.
    if (fromEnv && fileValue(key) !== undefined)
      convert(row.kind, fileValue(key), false, where(row, false));
    return convert(row.kind, fromEnv ? raw : fileValue(key), fromEnv, where(row, fromEnv));
  };
  const str = (key: string) => get(key) as string | undefined;
  const num = (key: string) => get(key) as number | undefined;
  const bool = (key: string) => get(key) as boolean | undefined;

  const agentId = str('mesh.agentId') ?? 'main';
  const models = isDoc(doc.models) ? doc.models : {};
  const settings: Settings = {
    ...(file ? { file } : {}),
    dataDir: resolve(opts.cwd, str('dataDir') ?? './data'),
    ...(str('fleetFile') ? { fleetFile: resolve(opts.cwd, str('fleetFile')!) } : {}),
    logLevel: (get('logLevel') as Settings['logLevel'] | undefined) ?? 'info',
    logFormat: (get('logFormat') as Settings['logFormat'] | undefined) ?? 'text',
    pushAllowHosts: (get('pushAllowHosts') as string[] | undefined) ?? [],
    ...(str('publicUrl') ? { publicUrl: str('publicUrl')! } : {}),
    ...(str('tasksDatabaseUrl') ? { tasksDatabaseUrl: str('tasksDatabaseUrl')! } : {}),
    ...(str('grpcPort') ? { grpcPort: str('grpcPort')! } : {}),
    hub: {
      host: str('hub.host') ?? '127.0.0.1',
      ...optionalNumbers({
        port: num('hub.port'),
        maxPort: num('hub.maxPort'),
        heartbeatMs: num('hub.heartbeatMs'),
        heartbeatMisses: num('hub.heartbeatMisses'),
        recoveryMaxMessages: num('hub.recoveryMaxMessages'),
        socketBufferBytes: num('hub.socketBufferBytes'),
        meshLeaseMs: num('hub.meshLeaseMs'),
      }),
      ...(str('hub.token') ? { token: str('hub.token')! } : {}),
      ...(str('hub.meshDatabaseUrl') ? { meshDatabaseUrl: str('hub.meshDatabaseUrl')! } : {}),
      ...((get('hub.publicOrigins') as string[] | undefined)?.length
        ? { publicOrigins: get('hub.publicOrigins') as string[] }
        : {}),
      ...(bool('hub.requireLogin') ? { requireLogin: true } : {}),
    },
    ...(bool('a2aOpen') ? { a2aOpen: true } : {}),
    ...(str('token') ? { token: str('token')! } : {}),
    mesh: {
      ...(str('mesh.hubUrl') ? { hubUrl: str('mesh.hubUrl')! } : {}),
      project: str('mesh.project') ?? 'main',
      agentId,
      name: str('mesh.name') ?? agentId,
      autoConnect: bool('mesh.autoConnect') ?? false,
      // The seed's name and ours for one setting: an explicit value of ours wins.
      rememberConnections:
        bool('mesh.rememberConnections') ?? bool('mesh.persistConnections') ?? false,
      reconnectMs: num('mesh.reconnectMs') ?? 500,
      inboxMessages: num('mesh.inboxMessages') ?? 64,
    },
    modelFor(name) {
      const own = isDoc(models[name]) ? models[name] : {};
      const shared = isDoc(models.default) ? models.default : {};
      const pick = (field: string, variable: string, kind: Kind): unknown => {
        for (const v of [`MODEL_${envName(name)}_${variable}`, `MODEL_${variable}`]) {
          const raw = env[v];
          if (raw !== undefined && raw !== '') return convert(kind, raw, true, v);
        }
        for (const [d, label] of [
          [own, `models.${name}`],
          [shared, 'models.default'],
        ] as const) {
          if (d[field] !== undefined)
            return convert(kind, d[field], false, `${file}: ${label}.${field}`);
        }
        return undefined;
      };
      // The key may sit in another variable the file names, so the file itself holds no secret.
      const keyVar = pick('apiKeyEnv', 'API_KEY_ENV', 'string') as string | undefined;
      const apiKey =
        (pick('apiKey', 'API_KEY', 'string') as string | undefined) ??
        (keyVar ? env[keyVar] || undefined : undefined);
      const baseUrl = pick('baseUrl', 'BASE_URL', 'string') as string | undefined;
      const agent = pick('agent', 'AGENT', 'agent') as AgentMode | undefined;
      return {
        ...(baseUrl ? { baseUrl } : {}),
        model: (pick('model', 'NAME', 'string') as string | undefined) ?? 'gpt-4o-mini',
        ...(apiKey ? { apiKey } : {}),
        ...(agent ? { agent } : {}),
        pingMs: (pick('pingMs', 'PING_MS', 'integer') as number | undefined) ?? 30_000,
      };
    },
  };
  // Every model entry is checked now, so a bad one stops the start instead of a later call.
  for (const name of Object.keys(models)) settings.modelFor(name);
  return settings;
}

function optionalNumbers(values: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(values).filter((e): e is [string, number] => e[1] !== undefined),
  );
}

/** Refuses keys the table does not know, so a misspelt setting is not silently ignored. */
function checkKeys(doc: Doc, file: string): void {
  const known = new Set(SETTINGS.map((r) => r.key).filter((k) => !k.startsWith('models.')));
  const sections = new Set([...known].filter((k) => k.includes('.')).map((k) => k.split('.')[0]!));
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'models') {
      if (!isDoc(v)) throw new Error(`${file}: models must map node names to model settings`);
      for (const [node, m] of Object.entries(v)) {
        if (!isDoc(m)) throw new Error(`${file}: models.${node} must be a mapping`);
        for (const field of Object.keys(m))
          if (!MODEL_FIELDS.has(field))
            throw new Error(
              `${file}: unknown setting models.${node}.${field}; known: ${[...MODEL_FIELDS].join(', ')}`,
            );
      }
    } else if (sections.has(k)) {
      if (!isDoc(v)) throw new Error(`${file}: ${k} must be a mapping`);
      for (const field of Object.keys(v))
        if (!known.has(`${k}.${field}`)) throw new Error(`${file}: unknown setting ${k}.${field}`);
    } else if (!known.has(k)) throw new Error(`${file}: unknown setting ${k}`);
  }
}

/** Checks one value by kind; text from the environment is converted first. */
function convert(kind: Kind, value: unknown, fromEnv: boolean, where: string): unknown {
  if (value === undefined || value === null) return undefined;
  const bad = (what: string): never => {
    throw new Error(`${where} must be ${what}, got ${JSON.stringify(String(value).slice(0, 40))}`);
  };
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : bad('text');
    case 'level':
      return ['debug', 'info', 'warn', 'error'].includes(value as string)
        ? value
        : bad('debug, info, warn or error');
    case 'format':
      return value === 'text' || value === 'json' ? value : bad('text or json');
    case 'agent':
      return AGENT_MODES.includes(value as AgentMode) ? value : bad('model, dynamic or keyword');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (fromEnv && /^(1|true|yes|on)$/i.test(value as string)) return true;
      if (fromEnv && /^(0|false|no|off)$/i.test(value as string)) return false;
      return bad('true or false');
    case 'list':
      if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
        return value.map((v) => v.trim()).filter(Boolean);
      return typeof value === 'string'
        ? value
            .split(',')
            .map((h) => h.trim())
            .filter(Boolean)
        : bad('a list of text');
    case 'port':
    case 'integer': {
      const n =
        typeof value === 'number'
          ? value
          : fromEnv && /^[0-9]{1,9}$/.test(value as string)
            ? Number(value)
            : NaN;
      const ok = Number.isInteger(n) && (kind === 'port' ? n >= 0 && n <= 65535 : n >= 1);
      return ok ? n : bad(kind === 'port' ? 'a port number (0-65535)' : 'a positive integer');
    }
  }
}
