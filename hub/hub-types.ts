/**
 * @module hub/hub-types — what a hub is made of and what it gives back: the options its process
 * passes to `createHub` (hub/hub.ts) and the hub it returns.
 */

import type { Database } from 'bun:sqlite';
import type { Server } from 'bun';
import type { FleetInvoker } from '../lib/fleet/invoke.ts';
import type { Fleet } from '../lib/config/fleet-file.ts';
import type { Log } from '../lib/log.ts';
import type { MeshLimits } from '../lib/mesh/limits.ts';
import type { MeshStore } from '../lib/mesh/store.ts';
import type { NodeApp, NodeOptions } from '../lib/node/node-types.ts';
import type { PeerRing } from '../lib/peer/signature.ts';
import type { PeerVerifier } from '../lib/peer/verifier.ts';
import type { PeerSigner } from '../lib/peer/signer.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import type { Limits } from '../lib/limits.ts';
import type { HubAccess } from './http/access.ts';
import type { SessionTable } from './http/sessions.ts';
import type { ThrottleOptions } from './http/sign-in-throttle.ts';
import type { TokenBook } from '../lib/auth/tokens.ts';
import type { OidcVerifier } from '../lib/auth/oidc/verifier.ts';
import type { ModelConfig } from './workbench/ask-model.ts';
import type { ModelHealth } from '../lib/model/health.ts';
import type { Catalog } from '../lib/catalog/catalog.ts';
import type { ReadyCheck } from '../lib/health.ts';
import type { FleetSnapshot } from './fleet/view.ts';
import type { FleetRegistry } from '../lib/fleet/registry.ts';
import type { MeshCluster } from './mesh/cluster.ts';
import type { MeshSocketData } from './mesh/server.ts';
import type { MetricsAccess } from '../lib/metrics/endpoint.ts';
import type { MetricsRegistry } from '../lib/metrics/registry.ts';
import type { OtlpConfig, OtlpExporter } from '../lib/fleet/otlp.ts';

export interface HubOptions {
  fleet: Fleet;
  /** More `/readyz` checks (the boot self-check's verdicts). */
  readyChecks?: Record<string, ReadyCheck>;
  /** The hub node's task files go to `<dataDir>/<hub name>/tasks/` (unless `tasksDatabaseUrl` is set). */
  dataDir: string;
  /** `postgres://…`: the hub node's tasks live there, shared by several hub processes (TASKS_DATABASE_URL). */
  tasksDatabaseUrl?: string;
  log: Log;
  /** The hub's keys (`loadPeerIdentity`); with the ring, the hub publishes its public key at `GET /peer/identity`. */
  identity: { signer: PeerSigner; verifier: PeerVerifier; ring?: PeerRing | (() => PeerRing) };
  /** What the hub's card is signed with (lib/node/card-keys.ts); else a key of this process. */
  cardKeys?: NodeOptions['cardKeys'];
  traceDb: Database;
  meshStore: MeshStore;
  /** The other hubs on the mesh's database (PostgreSQL); absent, this hub is alone. */
  meshCluster?: MeshCluster;
  /** MESH_TOKEN: the whole hub needs a principal, and this token is accepted as the token `mesh`. */
  meshToken?: string;
  /** Bearer tokens (`DATA_DIR/keys/tokens.json`); MESH_TOKEN is added to them as `mesh`. */
  tokens?: TokenBook;
  /** Trusted issuers' access tokens (auth.issuers, OIDC_ISSUER): their users are principals on every surface. */
  oidc?: OidcVerifier;
  /**
   * The console's client of the first trusted issuer (auth.console.clientId, OIDC_CLIENT_ID; the
   * secret: a confidential client; the scopes it asks for a person): its sign-in page offers
   * signing in through the issuer.
   */
  consoleClient?: { clientId: string; clientSecret?: string; scope?: string };
  /** HUB_PUBLIC_ORIGIN: where browsers reach the console besides the loopback addresses. */
  publicOrigins?: string[];
  /** HUB_REQUIRE_LOGIN: the console signs in even on loopback (always so beyond loopback, or with MESH_TOKEN). */
  requireLogin?: boolean;
  /** The console's sessions (tests pass one with their own clock). */
  sessions?: SessionTable;
  /** The key of the console's one-time sign-in URLs (`DATA_DIR/keys/console.key`; random without it). */
  consoleKey?: Uint8Array;
  /** How often one client address may try to sign in (hub/http/sign-in-throttle.ts). */
  signInThrottle?: ThrottleOptions;
  /** Heartbeat and recovery limits of the mesh (MESH_HEARTBEAT_MS, MESH_HEARTBEAT_MISSES, MESH_RECOVERY_MAX_MESSAGES). */
  meshLimits?: Partial<MeshLimits>;
  /** Bounds of the trace, the task cache, tasks and SSE queues (lib/limits.ts; defaults: LIMITS). */
  limits?: Partial<Limits>;
  host?: string;
  publicUrl?: string;
  /** How long a fleet snapshot is reused (ms). */
  fleetTtlMs?: number;
  /** An OpenAI-compatible endpoint that plans Ask Agent questions (MODEL_BASE_URL, MODEL_NAME, MODEL_API_KEY). */
  model?: ModelConfig;
  /** How often the live pages' sources are re-read while someone watches, in ms (fleet 5000, tasks 2000). */
  liveMs?: { fleet?: number; tasks?: number };
  /** The browser console's files (default: the project's console/ folder). */
  consoleDir?: string;
  fetch?: typeof fetch;
  /** Non-public hosts, addresses or CIDR ranges the hub's webhooks may reach (PUSH_ALLOW_HOSTS). */
  pushAllowHosts?: string[];
  /** Where the trace is exported as OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_ENDPOINT); off without it. */
  otlp?: OtlpConfig;
  /** Who may read `/metrics` when the hub is bound beyond loopback (the API's authentication). */
  metricsAccess?: MetricsAccess;
  /**
   * Nodes run elsewhere join at `POST /peer/join` (hub/fleet/join.ts): the fleet file read, the one
   * written, how the hub's ring reloads, and how often (ms, default 1,000) the fleet registry
   * checks the files for `fleet remove`, hand edits and key changes.
   */
  joins?: { from: string; to: string; reload: () => Promise<void>; syncMs?: number };
  /** Set false for no gRPC binding on the hub's node (lib/a2a/grpc/). */
  grpc?: boolean;
  /** The gRPC binding's port (GRPC_PORT): default the hub's port + 1000, 0 picks a free one. */
  grpcPort?: number;
  /** The mesh project MCP clients are present in (the mesh client's project, default main). */
  meshProject?: string;
  /**
   * Tenants the hub serves (`tenants`, `TENANTS`; lib/node/tenants.ts): its A2A bindings, its API
   * and discovery under `/{tenant}/…` (hub/http/tenant-paths.ts), the trace and the AI Catalog.
   */
  tenants?: readonly string[];
}

export interface Hub {
  trace: TraceStore;
  access: HubAccess;
  metrics: MetricsRegistry;
  /** The OTLP export, when configured. */
  otlp?: OtlpExporter;
  invoker: FleetInvoker;
  node: NodeApp;
  view: { snapshot(): Promise<FleetSnapshot> };
  /** The fleet as it is now, and its change feed (lib/fleet/registry.ts). */
  registry: FleetRegistry;
  /** Whether the hub's model answers (absent without a model). */
  model?: ModelHealth;
  /** The hub node's own capabilities (for the boot self-check). */
  catalog: Catalog;
  fetch(req: Request, server: Server<MeshSocketData>): Promise<Response>;
  /** A fresh one-time console URL (`<origin>/login?ticket=…`), at the address the hub listens on unless given one. */
  consoleUrl(origin?: string): string;
  /** Binds the port (walking up to `maxPort` when taken) and serves every piece. */
  listen(
    port: number,
    maxPort?: number,
  ): {
    url: string;
    port: number;
    /** The gRPC binding's port once it listens (undefined when off or when its port is taken). */
    grpc: Promise<number | undefined>;
    stop(): Promise<void>;
  };
}

/** The ring the hub pins its members' keys in, as it is now (the identity's live ring, or a fixed one). */
export const ringOf = (identity: HubOptions['identity']): PeerRing | undefined =>
  typeof identity.ring === 'function' ? identity.ring() : identity.ring;
