/**
 * @module hub/hub-console — the browser console's side of the hub: its static site, the one-time
 * sign-in tickets and the sign-in itself (through the first trusted issuer too, with a client id), the live feeds of the Fleet and Tasks pages, and the
 * console API (`/api/*`) over the fleet, the trace and the hub's own work.
 */

import { PROJECT_ROOT } from '../lib/project-root.ts';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { SseStreams } from '../lib/sse/sse.ts';
import type { TokenBook } from '../lib/auth/tokens.ts';
import type { Catalog } from '../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../lib/fleet/invoke.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import type { Limits } from '../lib/limits.ts';
import type { ModelHealth } from '../lib/model/health.ts';
import type { NodeApp } from '../lib/node/node-types.ts';
import type { FleetSnapshot } from './fleet/view.ts';
import type { HubAccess } from './http/access.ts';
import { createHubApi } from './http/api.ts';
import { createConsole } from './http/console.ts';
import { hubLiveFeeds } from './http/hub-live.ts';
import { createLogin } from './http/login.ts';
import { SignInThrottle } from './http/sign-in-throttle.ts';
import { createCodeFlow } from '../lib/auth/oidc/code-flow.ts';
import { type ConsoleOidc, PendingSignIns } from './http/oidc-pending.ts';
import { ConsoleTickets } from './http/tickets.ts';
import { privateFolder } from '../lib/private-folder.ts';
import type { HubOptions } from './hub-types.ts';
import type { AskAnswer } from './workbench/ask.ts';
import { negotiationsDir } from './workbench/negotiation.ts';

export interface HubConsoleParts {
  access: HubAccess;
  tokens?: TokenBook;
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  invoker: FleetInvoker;
  node: NodeApp;
  hubCatalog: Catalog;
  ask: (question: string) => Promise<AskAnswer>;
  model?: ModelHealth;
  limits: Limits;
  streams: SseStreams;
}

/** `DATA_DIR/hub/console-tickets.json`, its folder made 0700. */
function ticketFile(dataDir: string): string {
  const dir = join(dataDir, 'hub');
  privateFolder(dir);
  return join(dir, 'console-tickets.json');
}

/** The console's sign-in through the first trusted issuer, when a client id is configured. */
function consoleOidc(opts: HubOptions): { oidc?: ConsoleOidc } {
  const first = opts.oidc?.issuers[0];
  if (!opts.oidc || !first || !opts.consoleClient) return {};
  const flow = createCodeFlow({
    issuer: first.issuer,
    resource: first.audience,
    ...opts.consoleClient,
  });
  return { oidc: { flow, verifier: opts.oidc, pending: new PendingSignIns() } };
}

export function hubConsole(opts: HubOptions, p: HubConsoleParts) {
  const { fleet, log } = opts;
  const consoleSite = createConsole({
    consoleDir: opts.consoleDir ?? join(PROJECT_ROOT, 'console'),
    nodeModules: join(PROJECT_ROOT, 'node_modules'),
  });
  const tickets = new ConsoleTickets({
    key: opts.consoleKey ?? randomBytes(32),
    hub: fleet.hub.name,
    // Beside the hub's mesh and trace: used links stay used after a restart.
    file: ticketFile(opts.dataDir),
  });
  const login = createLogin({
    access: p.access,
    log,
    tickets,
    throttle: new SignInThrottle(opts.signInThrottle),
    tokens: p.tokens,
    ...consoleOidc(opts),
  });
  const live = hubLiveFeeds({
    view: p.view,
    tasks: () => p.node.engine,
    log,
    ...(opts.liveMs ? { liveMs: opts.liveMs } : {}),
  });
  const api = createHubApi({
    fleet,
    view: p.view,
    trace: p.trace,
    invoker: p.invoker,
    log,
    hubCatalog: p.hubCatalog,
    ask: p.ask,
    negotiationsDir: negotiationsDir(opts.dataDir),
    model: p.model,
    live,
    sse: { maxQueuedBytes: p.limits.sseQueueBytes, streams: p.streams },
  });
  return { consoleSite, tickets, login, live, api };
}
