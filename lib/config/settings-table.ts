/**
 * @module lib/config/settings-table — every setting of the kit in one table: its key in the
 * configuration file, the environment variable that overrides it, its kind, default and who
 * reads it. The README's table and the file's key check (lib/config/config-file.ts) read it.
 */

/** How a setting's value is checked (lib/config/convert.ts). */
export type Kind =
  | 'string'
  | 'port'
  | 'integer'
  | 'boolean'
  | 'list'
  | 'level'
  | 'format'
  | 'agent'
  | 'issuers';

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
    default: '(the task log)',
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
    key: 'grpc.maxConnections',
    env: 'GRPC_MAX_CONNECTIONS',
    kind: 'integer',
    default: '512',
    readBy: 'hub, node',
    description:
      'gRPC connections one process holds; one more is closed at once (`lume_grpc_cut_total`, reason `process_full`)',
  },
  {
    key: 'grpc.maxConnectionsPerAddress',
    env: 'GRPC_MAX_CONNECTIONS_PER_ADDRESS',
    kind: 'integer',
    default: '64',
    readBy: 'hub, node',
    description:
      'gRPC connections one client address holds; one more is closed at once (reason `address_full`)',
  },
  {
    key: 'grpc.handshakeMs',
    env: 'GRPC_HANDSHAKE_MS',
    kind: 'integer',
    default: '10000',
    readBy: 'hub, node',
    description:
      'Time a gRPC connection has to send the HTTP/2 preface and SETTINGS before it is cut (reason `handshake_timeout`)',
  },
  {
    key: 'grpc.idleMs',
    env: 'GRPC_IDLE_MS',
    kind: 'integer',
    default: '60000',
    readBy: 'hub, node',
    description: 'Time a gRPC connection with no call open is kept before GOAWAY (reason `idle`)',
  },
  {
    key: 'grpc.messageMs',
    env: 'GRPC_MESSAGE_MS',
    kind: 'integer',
    default: '30000',
    readBy: 'hub, node',
    description:
      'Time a gRPC call has to send its request message (`DEADLINE_EXCEEDED`, `GRPC_MESSAGE_TIMEOUT`)',
  },
  {
    key: 'grpc.finalGraceMs',
    env: 'GRPC_FINAL_GRACE_MS',
    kind: 'integer',
    default: '30000',
    readBy: 'hub, node',
    description:
      "Time an ended gRPC call's reader has to take the rest before the stream is cut (reason `stalled`)",
  },
  {
    key: 'grpc.maxStreamsPerConnection',
    env: 'GRPC_MAX_STREAMS_PER_CONNECTION',
    kind: 'integer',
    default: '100',
    readBy: 'hub, node',
    description: 'gRPC calls one HTTP/2 connection may have open (SETTINGS_MAX_CONCURRENT_STREAMS)',
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
    key: 'auth.issuers',
    env: 'OIDC_ISSUER',
    kind: 'issuers',
    default: '(none)',
    readBy: 'hub, node',
    description:
      'Trusted OpenID Connect issuers, a list of {issuer, audience} (the variable: one issuer URL); https, http on loopback only',
  },
  {
    key: 'auth.audience',
    env: 'OIDC_AUDIENCE',
    kind: 'string',
    default: '(none)',
    readBy: 'hub, node',
    description: 'The audience tokens must name, for issuers listed without one (and OIDC_ISSUER)',
  },
  {
    key: 'auth.console.clientId',
    env: 'OIDC_CLIENT_ID',
    kind: 'string',
    default: '(none)',
    readBy: 'hub',
    description:
      "The console's client id at the first issuer: its sign-in page offers signing in through it (authorization code with PKCE; redirect URI `<origin>/login/oidc/callback`)",
  },
  {
    key: 'auth.console.clientSecret',
    env: 'OIDC_CLIENT_SECRET',
    kind: 'string',
    default: '(none)',
    readBy: 'hub',
    description:
      "That client's secret (a confidential client; without it a public one, PKCE alone). Never logged or shown",
  },
  {
    key: 'auth.console.scope',
    env: 'OIDC_CLIENT_SCOPE',
    kind: 'string',
    default: 'openid a2a.read a2a.write',
    readBy: 'hub',
    description:
      'The scopes the console asks the issuer for a person (space-separated; `openid` is added when missing); the session gets those the access token carries',
  },
  {
    key: 'tenants',
    env: 'TENANTS',
    kind: 'list',
    default: '(none)',
    readBy: 'hub, node',
    description:
      "Tenants a node or the hub serves (comma-separated; lower-case letters, digits, dashes): the 1.0 `tenant` member, `/{tenant}/…` routes and the card's tenant interfaces; on the hub also `/{tenant}/api/…`, `/{tenant}/mcp` and one AI Catalog per tenant",
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
    key: 'fleet.healthEveryMs',
    env: 'FLEET_HEALTH_EVERY_MS',
    kind: 'integer',
    default: '1000',
    readBy: 'fleet',
    description:
      "How often `bun run fleet` probes each child's health route (at least 100; each probe waits up to 1 s)",
  },
  {
    key: 'fleet.unresponsiveAfterMs',
    env: 'FLEET_UNRESPONSIVE_MS',
    kind: 'integer',
    default: '3000',
    readBy: 'fleet',
    description:
      'A child that was up and has not answered its health route for this long is killed and restarted (at least 500)',
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
