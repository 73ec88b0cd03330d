/**
 * @module lib/fleet/invoke — the fleet configuration (`fixtures/fleet.json`: who the hub and the nodes are,
 * their ports and role lines, and where each runs) and `fleet.invoke`, the one way the hub calls
 * a node: signed, and traced whatever the outcome; `message` is its A2A form (SendMessage with a
 * data part), traced the same way.
 */

import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PRINCIPAL_NAME } from '../auth/principal.ts';
import type { CallFailure, Result } from '../errors/result.ts';
import {
  createA2AMessenger,
  SKILL,
  type FleetMessageOptions,
  type FleetMessageResult,
} from './message.ts';
import {
  tracedCall,
  type CallMeter,
  type CallSink,
  type TracedCallOptions,
} from './traced-call.ts';
import type { TraceContext } from '../telemetry/trace-context.ts';

export interface FleetMember {
  name: string;
  port: number;
  role: string;
  /**
   * Source file that starts this member: absolute, relative to the fleet file's folder when it
   * starts with `./` or `../` (made absolute by `loadFleet`), otherwise relative to the project root.
   */
  file: string;
  /** False for members `bun run fleet` does not start by default (e.g. the conformance agent). */
  default: boolean;
  /** Base URL peers use to reach it (`http://127.0.0.1:<port>` unless the file says otherwise). */
  url: string;
  /**
   * Runs elsewhere (added with `bun run fleet add`): nothing here starts it or makes its keys; the
   * ring holds the public key it published.
   */
  remote?: boolean;
}

export interface Fleet {
  hub: FleetMember;
  nodes: FleetMember[];
}

/**
 * Parses and validates a fleet document.
 * @throws Error with a readable message when the document is malformed (a configuration bug).
 */
export function parseFleet(doc: unknown): Fleet {
  if (!doc || typeof doc !== 'object') throw new Error('fleet: document must be an object');
  const d = doc as { hub?: unknown; nodes?: unknown };
  const member = (m: unknown, where: string): FleetMember => {
    if (!m || typeof m !== 'object') throw new Error(`fleet: ${where} must be an object`);
    const o = m as Record<string, unknown>;
    if (typeof o.name !== 'string' || !PRINCIPAL_NAME.test(o.name))
      throw new Error(`fleet: ${where}.name must match ${PRINCIPAL_NAME}`);
    if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
      throw new Error(`fleet: ${where}.port must be a port number`);
    if (typeof o.role !== 'string') throw new Error(`fleet: ${where}.role must be a string`);
    if (typeof o.file !== 'string') throw new Error(`fleet: ${where}.file must be a string`);
    const url =
      typeof o.url === 'string' ? o.url.replace(/\/+$/, '') : `http://127.0.0.1:${o.port}`;
    return {
      name: o.name,
      port: o.port,
      role: o.role,
      file: o.file,
      default: o.default !== false,
      url,
      ...(o.remote === true ? { remote: true } : {}),
    };
  };
  if (!Array.isArray(d.nodes)) throw new Error('fleet: nodes must be an array');
  const fleet: Fleet = {
    hub: member(d.hub, 'hub'),
    nodes: d.nodes.map((n, i) => member(n, `nodes[${i}]`)),
  };
  const seen = new Set<string>();
  for (const m of [fleet.hub, ...fleet.nodes]) {
    if (seen.has(m.name)) throw new Error(`fleet: duplicate name ${m.name}`);
    seen.add(m.name);
  }
  return fleet;
}

/**
 * Which fleet file a process reads: FLEET_FILE when set, else `<dataDir>/fleet.json` when
 * `bun run fleet add` has written one, else the project's `fixtures/fleet.json`.
 */
export function fleetFilePath(o: {
  fleetFile?: string | undefined;
  dataDir: string;
  root: string;
}): string {
  if (o.fleetFile) return resolve(o.fleetFile);
  const local = resolve(o.dataDir, 'fleet.json');
  return existsSync(local) ? local : resolve(o.root, 'fixtures', 'fleet.json');
}

/** Reads and validates the fleet file. @throws Error when it is missing or malformed. */
export async function loadFleet(path: string): Promise<Fleet> {
  const file = Bun.file(path);
  if (!(await file.exists())) throw new Error(`fleet: file not found: ${path}`);
  const fleet = parseFleet(await file.json());
  // A node file named `./…` or `../…` lives beside the fleet file, wherever that is.
  for (const m of [fleet.hub, ...fleet.nodes])
    if (/^\.\.?\//.test(m.file)) m.file = resolve(dirname(path), m.file);
  return fleet;
}

/** Finds a member (hub or node) by name. */
export function fleetMember(fleet: Fleet, name: string): FleetMember | undefined {
  return fleet.hub.name === name ? fleet.hub : fleet.nodes.find((n) => n.name === name);
}

// ---- fleet.invoke: the one way the hub calls a node ----

/** What fleet.invoke needs from the signed client (lib/peer/client.ts). */
interface FleetCaller {
  peerFetch(
    target: string,
    capability: string,
    args?: unknown,
    opts?: { timeout?: number; onBehalfOf?: string; meter?: CallMeter; trace?: TraceContext },
  ): Promise<FleetResult>;
}
type FleetResult = Result<unknown, CallFailure> & {
  /** Id of the trace record the call left (its number in /api/trace; the record holds the W3C ids). */
  traceId?: number;
};

export interface InvokeOptions {
  /** The owner key of the principal the hub calls for (lib/auth/principal.ts), signed with the body. */
  onBehalfOf?: string;
}

export interface FleetInvoker {
  /**
   * Calls `capability` on fleet node `target` over the signed peer channel and records the call
   * in the trace, failures and empty answers included. Never throws.
   */
  invoke(
    target: string,
    capability: string,
    args?: Record<string, unknown>,
    timeoutMs?: number,
    opts?: InvokeOptions,
  ): Promise<FleetResult>;
  /**
   * Sends an A2A 1.0 `SendMessage` with the data part `{skill, args}` to fleet node `target`'s
   * `/a2a` (its address from the fleet, never from the caller) in conversation `contextId`, and
   * answers with the completed task's first data artifact. Traced like `invoke` (capability =
   * skill). Never throws.
   */
  message(
    target: string,
    skill: string,
    args: Record<string, unknown>,
    opts: FleetMessageOptions,
  ): Promise<FleetMessageResult>;
}

interface FleetInvokerDeps {
  self: string;
  client: FleetCaller;
  trace: CallSink;
  now?: () => number;
  defaultTimeoutMs?: number;
  /** Where `message` finds a node's `/a2a`; without it every `message` fails with A2A_NO_ROUTE. */
  fleet?: Fleet;
  fetch?: typeof fetch;
  /** Largest A2A answer read, in bytes (default 8 MiB). */
  maxAnswerBytes?: number;
  /** Signs `message`'s A2A requests as this node (lib/fleet/message.ts); unsigned without it. */
  sign?: (target: string, body: Uint8Array) => Promise<Record<string, string>>;
}

const CARRIES_SPAN: TracedCallOptions = { carriesSpan: true };

export function createFleetInvoker(deps: FleetInvokerDeps): FleetInvoker {
  const now = deps.now ?? Date.now;
  /** Runs one call in a child span of the current trace and writes its trace record, whatever the outcome. */
  const traced = <R extends { ok: true; result: unknown } | { ok: false; error: { code: string } }>(
    target: string,
    capability: string,
    call: (meter: CallMeter) => Promise<R>,
    opts?: TracedCallOptions,
  ) => tracedCall(deps.trace, { from: deps.self, to: target, capability }, call, now, opts);
  const sendMessage = createA2AMessenger(deps);
  return {
    invoke(target, capability, args = {}, timeoutMs = deps.defaultTimeoutMs ?? 10_000, opts = {}) {
      // The peer client sends the call's span itself: the call need not run inside it.
      return traced(
        target,
        capability,
        (meter) =>
          deps.client.peerFetch(target, capability, args, {
            timeout: timeoutMs,
            meter,
            trace: meter.span,
            ...(opts.onBehalfOf ? { onBehalfOf: opts.onBehalfOf } : {}),
          }),
        CARRIES_SPAN,
      );
    },
    message(target, skill, args, opts) {
      // A malformed skill is refused, and still leaves a row, under a fixed name rather than the bad text.
      return traced(
        String(target),
        typeof skill === 'string' && SKILL.test(skill) ? skill : 'invalid.skill',
        (meter) =>
          sendMessage(
            target,
            skill,
            args,
            opts?.contextId,
            opts?.timeoutMs ?? deps.defaultTimeoutMs ?? 10_000,
            meter,
          ),
      );
    },
  };
}
