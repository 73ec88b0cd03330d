/**
 * @module lib/node/node-types — what a node is made of and what it gives back: the definition a
 * node file supplies, the options its process passes, and the app and running server
 * `createNode` (lib/node/create-node.ts) returns.
 */

import type { AgentExtension } from '../a2a/card/types.ts';
import type { SpanSink } from '../telemetry/a2a-span.ts';
import type { AgentCard } from '../a2a/card/types.ts';
import type { AnyElysia } from 'elysia';
import type { AnonymousAccess, Authenticate } from '../auth/access.ts';
import type { OidcVerifier } from '../auth/oidc/verifier.ts';
import type { TokenBook } from '../auth/tokens.ts';
import type { CardKey } from '../a2a/card/signature.ts';
import type { TaskEngine } from '../a2a/engine/engine.ts';
import type { TaskEvent } from '../a2a/types.ts';
import type { WebhookSender } from '../a2a/push/delivery.ts';
import type { GrpcServer } from '../a2a/grpc/server.ts';
import type { Agent } from '../a2a/agent.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Fleet } from '../config/fleet-file.ts';
import type { Log } from '../log.ts';
import type { PeerClient } from '../peer/client.ts';
import type { PeerVerifier } from '../peer/verifier.ts';
import type { CallSink } from '../fleet/traced-call.ts';
import type { MetricsAccess } from '../metrics/endpoint.ts';
import type { RequestObserver } from '../metrics/http.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import type { TaskStore } from '../a2a/store/task-store.ts';
import type { SseStreams } from '../sse/sse.ts';
import type { ReadyCheck } from '../health.ts';
import type { Limits } from '../limits.ts';
import type { McpDefinition } from '../mcp/endpoint.ts';

export interface NodeDefinition {
  name: string;
  description: string;
  version?: string;
  catalog: Catalog;
  /** Defaults to the catalog agent (keyword pick / data-part skill call). */
  agent?: Agent;
  /**
   * Whether a model answers messages; declared on the card as the agent-backed extension
   * (lib/a2a/card/card.ts). A function is asked at every card request (a model that comes and goes).
   */
  agentBacked?: boolean | (() => boolean);
  /**
   * A2A extensions the node supports, declared on its card (`capabilities.extensions`): a caller
   * activates one by naming its `uri` in `A2A-Extensions`; one marked `required` must be named or
   * the call is refused (-32008). A capability asks `extensionActive(uri)` (lume-a2a/node).
   */
  extensions?: readonly AgentExtension[];
  /** Files and folders the node reads its data from; the boot self-check reads each (lib/node/self-check.ts). */
  dataPaths?: readonly string[];
  /** How a node that may be model-backed wants its model used, unless configured otherwise (lib/agents/model-agent.ts). */
  modelMode?: 'model' | 'dynamic';
  inputModes?: string[];
  outputModes?: string[];
  /**
   * False for an app that joins the fleet through the signed peer channel only: no agent card
   * and no `/a2a` (yet); `/peer/*`, `/health` and `/capabilities` are still served.
   */
  a2a?: boolean;
  /**
   * MCP served at `/mcp` (Streamable HTTP, lib/mcp/), under the node's access policy: its tools,
   * resources, prompts and completions.
   */
  mcp?: McpDefinition;
  /** Work to end when the process shuts down cleanly (e.g. the executor's running jobs). */
  shutdown?: () => Promise<void>;
}

export interface NodeOptions {
  /** Tasks go to `<dataDir>/<name>/tasks/` (unless `tasksDatabaseUrl` is set). */
  dataDir: string;
  /**
   * `postgres://…`: the node's tasks live in this database instead, shared by every process of
   * the node that names it (TASKS_DATABASE_URL; docs/scale-out.md).
   */
  tasksDatabaseUrl?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The URL the card advertises (PEER_PUBLIC_URL). */
  publicUrl?: string;
  log?: Log;
  now?: () => number;
  /** Set false to turn webhook delivery off (the card then says pushNotifications: false). */
  push?: boolean;
  /** Non-public webhook hosts allowed: names, addresses or CIDR ranges (PUSH_ALLOW_HOSTS); see lib/a2a/push/delivery.ts. */
  pushAllowHosts?: string[];
  pushRetryDelaysMs?: number[];
  /** How webhook host names resolve (tests give a fixed table); default node:dns `lookup`. */
  pushResolveName?: (host: string) => Promise<{ address: string; family: number }[]>;
  maxBodyBytes?: number;
  /**
   * The signed peer channel (`/peer/invoke`, `/peer/relay`); without it those routes refuse.
   * `spans`: where the calls it serves and forwards are recorded (the hub's trace).
   */
  peer?: { verifier: PeerVerifier; client?: PeerClient; fleet?: Fleet; spans?: CallSink };
  /** The process's metrics, when it shares one registry (the hub); otherwise the node has its own. */
  metrics?: MetricsRegistry;
  /** What measures the requests, when the process already has one (it must be on `metrics`). */
  requests?: RequestObserver;
  /** Who may read `/metrics` beyond loopback (lib/metrics/endpoint.ts); without it only a loopback bind serves it. */
  metricsAccess?: MetricsAccess;
  /**
   * Who may call the A2A routes (docs/security.md). `tokens`: the bearer tokens accepted (the
   * fleet's `DATA_DIR/keys/tokens.json`); `anonymous`: what a caller without proof may do (default
   * `read` on loopback, `none` beyond); `authenticate` replaces bearer-token authentication (the
   * hub adds console sessions); `oidc`: trusted issuers, whose access tokens are accepted too.
   */
  access?: {
    tokens?: TokenBook;
    oidc?: OidcVerifier;
    anonymous?: AnonymousAccess;
    authenticate?: Authenticate;
  };
  /** Tenants served (`tenants`, `TENANTS`; lib/node/tenants.ts); none: the `tenant` member is ignored. */
  tenants?: readonly string[];
  /** Bounds of the task cache, tasks and SSE queues (defaults: LIMITS). */
  limits?: Partial<Limits>;
  /**
   * The key the agent card is signed with (the node's Ed25519 identity) and, during a rotation,
   * the public keys it replaced, which the JWKS keeps serving. Without it the node signs with a
   * key made for this process only (a node outside any fleet has no identity of its own).
   */
  cardKeys?: { current: CardKey; previous?: readonly { kid: string; publicKey: Uint8Array }[] };
  /** Called on every event of every task (the hub's live Tasks pages listen). */
  onTaskEvent?: (event: TaskEvent) => void;
  /** The registry of open SSE streams, when the process shares one (the hub); otherwise the node makes its own. */
  streams?: SseStreams;
  /** More readiness checks, beside the task store, the peer keys and the shutdown state. */
  readyChecks?: Record<string, ReadyCheck>;
  /** The node's public identity, served at `GET /peer/identity` (lib/peer/keys.ts `publicIdentity`). */
  identity?: unknown;
  /** Set false to serve no gRPC binding (lib/a2a/grpc/); the card then lists none. */
  grpc?: boolean;
  /** The gRPC binding's port (`--grpc-port`): default the node's port + 1000, 0 picks a free one. */
  grpcPort?: number;
  /**
   * Where the A2A server span of every operation goes (an OTLP exporter: `bun run node` makes one
   * when OTEL_EXPORTER_OTLP_ENDPOINT is set; docs/observability.md). None: no spans are made.
   */
  spanExport?: SpanSink;
}

export interface RunningNode {
  url: string;
  port: number;
  /** The gRPC binding's port, when the node serves it. */
  grpcPort?: number;
  stop(): Promise<void>;
}

export interface NodeApp {
  app: AnyElysia;
  /** `app.handle`, measured and run in each request's trace context: what a server should call. */
  fetch(request: Request): Promise<Response>;
  metrics: MetricsRegistry;
  engine: TaskEngine;
  store: TaskStore;
  /** Resolves once the task store is open (at once for the task log); `start` waits for it. */
  ready(): Promise<void>;
  /** The node's open SSE streams. */
  streams: SseStreams;
  /** From now on `/readyz` answers 503 `shutting down` (set at the start of a stop). */
  markShuttingDown(): void;
  push: WebhookSender | undefined;
  /** The card as currently served. */
  card(): AgentCard;
  /** The card's content without its signatures, read without signing it (start-up's reads). */
  cardContent(): AgentCard;
  /**
   * Signs the card with a new key from now on; the key it replaces stays in the JWKS (a client
   * may hold a card signed with it for the card's max-age).
   */
  rotateCardKey(next: CardKey): void;
  /**
   * Fixes the port the card advertises, for a node served by someone else's server (the hub
   * serves its own node inside its Bun.serve through `app.handle`).
   */
  advertise(port: number): void;
  /**
   * Serves the gRPC binding on its own port and lists it on the card (`start` does this unless
   * `grpc` is false; the hub calls it beside its own server).
   */
  serveGrpc(port: number): Promise<GrpcServer>;
  /** Binds the port, fixes the advertised URL, and serves. */
  start(): Promise<RunningNode>;
}
