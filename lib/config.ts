/**
 * @module lib/config — the one configuration file (`lume.config.json`, `.yaml`/`.yml` or `.toml`,
 * parsed by Bun's own parsers) and the environment variables that override it. Entry files call
 * `loadSettings` once and pass plain values down; nothing else reads the file or the environment.
 * Every setting has a default, so no file at all is a valid configuration. The table of settings,
 * the file, the value checks and the model settings are in lib/config/.
 */

import { isPlainObject } from './json/guards.ts';
import { resolve } from 'node:path';
import { readConfigFile } from './config/config-file.ts';
import { convert } from './config/convert.ts';
import { modelSettingsFor, type ModelSettings } from './config/model-settings.ts';
import { SETTINGS, type SettingRow } from './config/settings-table.ts';

/** The settings table by key: one look-up per setting read (a search of the table ran hot at start). */
const SETTING_ROWS: ReadonlyMap<string, SettingRow> = new Map(SETTINGS.map((r) => [r.key, r]));
import type { Limits } from './limits.ts';
import { checkIssuers, type TrustedIssuer } from './auth/oidc/verifier.ts';

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
  /** postgres://… keeps tasks in PostgreSQL (docs/scale-out.md); unset: the task log under dataDir. */
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
  /** The gRPC port's bounds (`grpc.*`), as limits (lib/limits.ts); absent: the defaults. */
  grpc: Partial<Pick<Limits, GrpcLimit>>;
  /** `bun run fleet`'s liveness checks of its children (hub/fleet/supervisor.ts). */
  fleet: {
    healthEveryMs?: number;
    unresponsiveAfterMs?: number;
  };
  /** Anonymous callers may also change state on a node (loopback only; conformance runs); absent: false. */
  a2aOpen?: boolean;
  /** Trusted OpenID Connect issuers, each with the audience its tokens must name (checked). */
  auth: {
    issuers: TrustedIssuer[];
    /** The console's client of the first issuer (a secret: confidential); absent: no issuer sign-in. */
    console?: { clientId: string; clientSecret?: string; scope?: string };
  };
  /** Tenants a node serves (lib/node/tenants.ts); none: the `tenant` member is ignored. */
  tenants: string[];
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

/**
 * The settings: environment over file over default. `cwd` is where a config file is looked for.
 * @throws Error naming the setting (its file key or variable) that is malformed or unknown
 */
export function loadSettings(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
}): Settings {
  const { env } = opts;
  const { file, doc } = readConfigFile(env, opts.cwd);

  const fileValue = (key: string): unknown =>
    key.split('.').reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), doc);
  const where = (row: SettingRow, fromEnv: boolean) => (fromEnv ? row.env : `${file}: ${row.key}`);
  /** A setting's value: the variable when set (non-empty), else the file's, checked by kind. */
  const get = (key: string): unknown => {
    const row = SETTING_ROWS.get(key)!;
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
  const models = isPlainObject(doc.models) ? doc.models : {};
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
    grpc: grpcLimits(num),
    fleet: optionalNumbers({
      healthEveryMs: atLeast(num('fleet.healthEveryMs'), 100, 'fleet.healthEveryMs'),
      unresponsiveAfterMs: atLeast(
        num('fleet.unresponsiveAfterMs'),
        500,
        'fleet.unresponsiveAfterMs',
      ),
    }),
    auth: {
      issuers: issuersOf(get('auth.issuers'), str('auth.audience')),
      ...(str('auth.console.clientId')
        ? {
            console: {
              clientId: str('auth.console.clientId')!,
              ...(str('auth.console.clientSecret')
                ? { clientSecret: str('auth.console.clientSecret')! }
                : {}),
              ...(str('auth.console.scope') ? { scope: str('auth.console.scope')! } : {}),
            },
          }
        : {}),
    },
    tenants: tenantsOf(get('tenants') as string[] | undefined),
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
    modelFor: (name) => modelSettingsFor(name, env, models, file),
  };
  // Every model entry is checked now, so a bad one stops the start instead of a later call.
  for (const name of Object.keys(models)) settings.modelFor(name);
  return settings;
}

type GrpcLimit =
  | 'grpcConnections'
  | 'grpcConnectionsPerAddress'
  | 'grpcHandshakeMs'
  | 'grpcIdleMs'
  | 'grpcMessageMs'
  | 'grpcFinalGraceMs'
  | 'grpcStreamsPerConnection';

/** The `grpc.*` settings as the limits they set; each at least 1. */
function grpcLimits(num: (key: string) => number | undefined): Partial<Pick<Limits, GrpcLimit>> {
  const keys: Record<string, GrpcLimit> = {
    'grpc.maxConnections': 'grpcConnections',
    'grpc.maxConnectionsPerAddress': 'grpcConnectionsPerAddress',
    'grpc.handshakeMs': 'grpcHandshakeMs',
    'grpc.idleMs': 'grpcIdleMs',
    'grpc.messageMs': 'grpcMessageMs',
    'grpc.finalGraceMs': 'grpcFinalGraceMs',
    'grpc.maxStreamsPerConnection': 'grpcStreamsPerConnection',
  };
  return optionalNumbers(
    Object.fromEntries(Object.entries(keys).map(([k, l]) => [l, atLeast(num(k), 1, k)])),
  );
}

/** The tenants, each a name a path segment carries as it is. @throws Error naming the bad one */
function tenantsOf(list: string[] = []): string[] {
  for (const t of list)
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(t))
      throw new Error(
        `tenants (TENANTS): ${JSON.stringify(t.slice(0, 64))} is not lower-case letters, digits and dashes`,
      );
  return [...new Set(list)];
}

/** Each issuer with its audience (its own, else auth.audience), checked. @throws Error naming the problem */
function issuersOf(value: unknown, audience: string | undefined): TrustedIssuer[] {
  const list = (value as { issuer: string; audience?: string }[] | undefined) ?? [];
  return checkIssuers(
    list.map((e) => {
      const aud = e.audience ?? audience;
      if (!aud)
        throw new Error(
          `auth.issuers: ${e.issuer.slice(0, 80)} needs an audience (its own, or auth.audience / OIDC_AUDIENCE)`,
        );
      return { issuer: e.issuer, audience: aud };
    }),
  );
}

/** `value`, unless it is below `min`: a probe every millisecond would be a busy loop. */
function atLeast(value: number | undefined, min: number, key: string): number | undefined {
  if (value !== undefined && value < min)
    throw new Error(`${key} (${SETTING_ROWS.get(key)!.env}) must be at least ${min}, not ${value}`);
  return value;
}

function optionalNumbers(values: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(values).filter((e): e is [string, number] => e[1] !== undefined),
  );
}
