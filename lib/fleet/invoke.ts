/**
 * @module lib/fleet/invoke — `fleet.invoke`, the one way the hub calls a node: signed, and traced
 * whatever the outcome; `message` is its A2A form (SendMessage with a data part), traced the same
 * way. Who the members are is the fleet file's (lib/config/fleet-file.ts).
 */

import type { CallFailure, Result } from '../errors/result.ts';
import type { Fleet } from '../config/fleet-file.ts';
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
import { tenantOfKey } from '../auth/principal.ts';

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
    tenant?: string,
  ) =>
    tracedCall(
      deps.trace,
      { from: deps.self, to: target, capability, ...(tenant !== undefined ? { tenant } : {}) },
      call,
      now,
      opts,
    );
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
        // The tenant the call is made for travels in its owner key; the record names it too.
        tenantOfKey(opts.onBehalfOf),
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
