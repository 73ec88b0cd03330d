/**
 * @module fleet — the fleet configuration (`fixtures/fleet.json`: who the hub and the nodes are,
 * their ports and role lines, and where each runs) and `fleet.invoke`, the one way the hub calls
 * a node: signed, and traced whatever the outcome; `message` is its A2A form (SendMessage with a
 * data part), traced the same way.
 */

import { readBodyBytes } from './body.ts';

export interface FleetMember {
  name: string;
  port: number;
  role: string;
  /** Source file that starts this member, relative to the project root. */
  file: string;
  /** False for members `bun run fleet` does not start by default (e.g. the conformance agent). */
  default: boolean;
  /** Base URL peers use to reach it (`http://127.0.0.1:<port>` unless the file says otherwise). */
  url: string;
}

export interface Fleet {
  hub: FleetMember;
  nodes: FleetMember[];
}

const NAME = /^[a-z][a-z0-9-]{0,31}$/;

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
    if (typeof o.name !== 'string' || !NAME.test(o.name)) throw new Error(`fleet: ${where}.name must match ${NAME}`);
    if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
      throw new Error(`fleet: ${where}.port must be a port number`);
    if (typeof o.role !== 'string') throw new Error(`fleet: ${where}.role must be a string`);
    if (typeof o.file !== 'string') throw new Error(`fleet: ${where}.file must be a string`);
    const url = typeof o.url === 'string' ? o.url.replace(/\/+$/, '') : `http://127.0.0.1:${o.port}`;
    return { name: o.name, port: o.port, role: o.role, file: o.file, default: o.default !== false, url };
  };
  if (!Array.isArray(d.nodes)) throw new Error('fleet: nodes must be an array');
  const fleet: Fleet = { hub: member(d.hub, 'hub'), nodes: d.nodes.map((n, i) => member(n, `nodes[${i}]`)) };
  const seen = new Set<string>();
  for (const m of [fleet.hub, ...fleet.nodes]) {
    if (seen.has(m.name)) throw new Error(`fleet: duplicate name ${m.name}`);
    seen.add(m.name);
  }
  return fleet;
}

/** Reads and validates the fleet file. @throws Error when it is missing or malformed. */
export async function loadFleet(path: string): Promise<Fleet> {
  const file = Bun.file(path);
  if (!(await file.exists())) throw new Error(`fleet: file not found: ${path}`);
  return parseFleet(await file.json());
}

/** Finds a member (hub or node) by name. */
export function fleetMember(fleet: Fleet, name: string): FleetMember | undefined {
  return fleet.hub.name === name ? fleet.hub : fleet.nodes.find((n) => n.name === name);
}

// ---- fleet.invoke: the one way the hub calls a node ----

/** What fleet.invoke needs from the signed client (lib/peer-client.ts). */
export interface FleetCaller {
  peerFetch(target: string, capability: string, args?: unknown, opts?: { timeout?: number }): Promise<FleetResult>;
}
export type FleetResult = ({ ok: true; result: unknown; summary?: string } | { ok: false; error: { code: string; message: string; kind?: string; at?: string } }) & {
  /** Id of the trace record the call left (set by FleetInvoker). */
  traceId?: number;
};

/** Where trace records go (lib/trace.ts). */
export interface TraceSink {
  record(r: {
    ts: string; from: string; to: string; capability: string; durationMs: number;
    outcome: 'ok' | 'failed' | 'empty'; errorCode: string | null; bytes: number;
  }): { id: number };
}

export interface FleetInvoker {
  /**
   * Calls `capability` on fleet node `target` over the signed peer channel and records the call
   * in the trace, failures and empty answers included. Never throws.
   */
  invoke(target: string, capability: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<FleetResult>;
  /**
   * Sends an A2A 1.0 `SendMessage` with the data part `{skill, args}` to fleet node `target`'s
   * `/a2a` (its address from the fleet, never from the caller) in conversation `contextId`, and
   * answers with the completed task's first data artifact. Traced like `invoke` (capability =
   * skill). Never throws.
   */
  message(target: string, skill: string, args: Record<string, unknown>, opts: FleetMessageOptions): Promise<FleetMessageResult>;
}

export interface FleetMessageOptions {
  /** The conversation this message belongs to (the same for every turn of one exchange). */
  contextId: string;
  timeoutMs?: number;
}
export type FleetMessageResult = (
  | { ok: true; result: unknown; taskId: string; contextId: string }
  | { ok: false; error: { code: A2AMessageErrorCode; message: string; kind: 'bad-call' | 'unreachable' | 'timeout' | 'bad-answer' | 'failed'; taskId?: string } }
) & {
  /** Id of the trace record the call left. */
  traceId?: number;
};

/** Stable codes of a failed `message`, each once. */
export const A2A_MESSAGE_ERRORS = {
  A2A_NO_ROUTE: 'target is not a fleet node the hub can message',
  A2A_BAD_REQUEST: 'skill, args or contextId are malformed',
  A2A_UNREACHABLE: 'the node did not answer',
  A2A_TIMEOUT: 'the node did not answer in time',
  A2A_BAD_ANSWER: 'the answer is not an A2A 1.0 SendMessage result',
  A2A_RPC_ERROR: 'the node answered with a JSON-RPC error',
  A2A_TASK_FAILED: 'the task failed',
  A2A_TASK_REJECTED: 'the node rejected the task',
  A2A_INPUT_REQUIRED: 'the task needs more input',
  A2A_NOT_COMPLETED: 'the task did not complete',
} as const;
export type A2AMessageErrorCode = keyof typeof A2A_MESSAGE_ERRORS;

/** True for answers with nothing in them: null, empty string, list or object, `found: false`, or only empty lists. */
export function isEmptyResult(r: unknown): boolean {
  if (r === null || r === undefined || r === '') return true;
  if (Array.isArray(r)) return r.length === 0;
  if (typeof r !== 'object') return false;
  const o = r as Record<string, unknown>;
  const values = Object.values(o);
  if (values.length === 0 || o.found === false) return true;
  const lists = values.filter(Array.isArray) as unknown[][];
  return lists.length > 0 && lists.every((l) => l.length === 0);
}

export interface FleetInvokerDeps {
  self: string;
  client: FleetCaller;
  trace: TraceSink;
  now?: () => number;
  defaultTimeoutMs?: number;
  /** Where `message` finds a node's `/a2a`; without it every `message` fails with A2A_NO_ROUTE. */
  fleet?: Fleet;
  fetch?: typeof fetch;
  /** Largest A2A answer read, in bytes (default 8 MiB). */
  maxAnswerBytes?: number;
}

export function createFleetInvoker(deps: FleetInvokerDeps): FleetInvoker {
  const now = deps.now ?? Date.now;
  /** Runs one call and writes its trace record, whatever the outcome. */
  async function traced<R extends { ok: true; result: unknown } | { ok: false; error: { code: string } }>(target: string, capability: string, call: () => Promise<R>): Promise<R & { traceId: number }> {
    const started = now();
    const t0 = performance.now();
    const r = await call();
    const durationMs = Math.round((performance.now() - t0) * 100) / 100;
    const bytes = r.ok && r.result !== undefined ? Buffer.byteLength(JSON.stringify(r.result)) : 0;
    const rec = deps.trace.record({
      ts: new Date(started).toISOString(),
      from: deps.self,
      to: target,
      capability,
      durationMs,
      outcome: !r.ok ? 'failed' : isEmptyResult(r.result) ? 'empty' : 'ok',
      errorCode: r.ok ? null : r.error.code,
      bytes,
    });
    return { ...r, traceId: rec.id };
  }
  const sendMessage = createA2AMessenger(deps);
  return {
    invoke(target, capability, args = {}, timeoutMs = deps.defaultTimeoutMs ?? 10_000) {
      return traced(target, capability, () => deps.client.peerFetch(target, capability, args, { timeout: timeoutMs }));
    },
    message(target, skill, args, opts) {
      // A malformed skill is refused, and still leaves a row, under a fixed name rather than the bad text.
      return traced(String(target), typeof skill === 'string' && SKILL.test(skill) ? skill : 'invalid.skill', () =>
        sendMessage(target, skill, args, opts?.contextId, opts?.timeoutMs ?? deps.defaultTimeoutMs ?? 10_000));
    },
  };
}

// ---- message: one A2A 1.0 SendMessage with a data part ----

const SKILL = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
/** Context ids the hub makes or accepts: no spaces or characters that could mean anything else. */
const CONTEXT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

type MessageFailure = Extract<FleetMessageResult, { ok: false }>;
const mfail = (code: A2AMessageErrorCode, kind: MessageFailure['error']['kind'], message?: string, taskId?: string): MessageFailure => ({
  ok: false,
  error: { code, message: message ?? A2A_MESSAGE_ERRORS[code], kind, ...(taskId ? { taskId } : {}) },
});

/** The text of a task's status message, if it has one. */
function statusText(status: Record<string, unknown>): string {
  const parts = (status.message as { parts?: unknown[] } | undefined)?.parts;
  const texts = Array.isArray(parts) ? parts.map((p) => (p as { text?: unknown })?.text).filter((t): t is string => typeof t === 'string') : [];
  return texts.join(' ').slice(0, 2000);
}

/** Reads a v1.0 SendMessage answer: the completed task's first data part, or a coded failure. */
function readTask(doc: unknown, contextId: string): FleetMessageResult {
  const d = doc as { result?: { task?: unknown }; error?: { code?: unknown; message?: unknown } } | null;
  if (d && typeof d === 'object' && d.error && typeof d.error === 'object')
    return mfail('A2A_RPC_ERROR', 'failed', `JSON-RPC error ${String(d.error.code)}: ${typeof d.error.message === 'string' ? d.error.message.slice(0, 500) : ''}`);
  const task = d?.result?.task as { id?: unknown; contextId?: unknown; status?: Record<string, unknown>; artifacts?: unknown[] } | undefined;
  if (!task || typeof task.id !== 'string' || !task.status || typeof task.status.state !== 'string') return mfail('A2A_BAD_ANSWER', 'bad-answer');
  if (task.contextId !== contextId) return mfail('A2A_BAD_ANSWER', 'bad-answer', `the task answered in context ${String(task.contextId)}, not ${contextId}`, task.id);
  const said = statusText(task.status);
  switch (task.status.state) {
    case 'TASK_STATE_COMPLETED': {
      for (const a of Array.isArray(task.artifacts) ? task.artifacts : []) {
        const part = ((a as { parts?: unknown[] })?.parts ?? []).find((p) => p !== null && typeof p === 'object' && 'data' in p) as { data: unknown } | undefined;
        if (part) return { ok: true, result: part.data, taskId: task.id, contextId };
      }
      // Completed without data: an empty answer, traced as such.
      return { ok: true, result: null, taskId: task.id, contextId };
    }
    case 'TASK_STATE_FAILED':
      return mfail('A2A_TASK_FAILED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_TASK_FAILED, task.id);
    case 'TASK_STATE_REJECTED':
      return mfail('A2A_TASK_REJECTED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_TASK_REJECTED, task.id);
    case 'TASK_STATE_INPUT_REQUIRED':
      return mfail('A2A_INPUT_REQUIRED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_INPUT_REQUIRED, task.id);
    default:
      return mfail('A2A_NOT_COMPLETED', 'failed', `the task is ${task.status.state}${said ? `: ${said}` : ''}`, task.id);
  }
}

function createA2AMessenger(deps: FleetInvokerDeps) {
  const doFetch = deps.fetch ?? fetch;
  const maxAnswer = deps.maxAnswerBytes ?? 8 * 1024 * 1024;
  return async (target: string, skill: string, args: Record<string, unknown>, contextId: string | undefined, timeout: number): Promise<FleetMessageResult> => {
    // Fleet nodes only: the hub does not message itself, and no caller supplies an address.
    const member = deps.fleet && typeof target === 'string' ? deps.fleet.nodes.find((n) => n.name === target) : undefined;
    if (!member) return mfail('A2A_NO_ROUTE', 'bad-call');
    if (typeof skill !== 'string' || !SKILL.test(skill)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'skill is not a capability id');
    if (!args || typeof args !== 'object' || Array.isArray(args)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'args must be an object');
    if (typeof contextId !== 'string' || !CONTEXT_ID.test(contextId)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'contextId is missing or malformed');
    let body: string;
    try {
      body = JSON.stringify({
        jsonrpc: '2.0',
        id: crypto.randomUUID(),
        method: 'SendMessage',
        params: {
          message: { messageId: crypto.randomUUID(), contextId, role: 'ROLE_USER', parts: [{ data: { skill, args }, mediaType: 'application/json' }] },
          configuration: { returnImmediately: false },
        },
      });
    } catch {
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'args are not serialisable as JSON');
    }
    try {
      const res = await doFetch(`${member.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body,
        signal: AbortSignal.timeout(timeout),
      });
      const bytes = await readBodyBytes(res, maxAnswer);
      if (!bytes) return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer is larger than ${maxAnswer} bytes`);
      let doc: unknown;
      try {
        doc = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer (HTTP ${res.status}) is not JSON`);
      }
      return readTask(doc, contextId);
    } catch (e) {
      const name = (e as Error)?.name;
      return name === 'TimeoutError' || name === 'AbortError'
        ? mfail('A2A_TIMEOUT', 'timeout', `${target} did not answer within ${timeout} ms`)
        : mfail('A2A_UNREACHABLE', 'unreachable', `${target} is unreachable`);
    }
  };
}
