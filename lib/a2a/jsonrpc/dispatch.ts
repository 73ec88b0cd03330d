/**
 * @module lib/a2a/jsonrpc/dispatch — runs JSON-RPC requests on the A2A operations: finds a method
 * in the table of the request's version (saying which version a method of the other one belongs
 * to), keeps streaming methods out of batches, turns a throw into INTERNAL_ERROR, and answers each
 * element of a batch.
 */

import type { Principal } from '../../auth/principal.ts';
import type { Log } from '../../log.ts';
import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import {
  rpcError,
  rpcResult,
  type Envelope,
  type JsonRpcId,
  type JsonRpcRequest,
} from './envelope.ts';
import type { OperationTable } from '../operation-table.ts';
import { V1_METHODS, type Operation, type Outcome } from '../operations.ts';
import { V03_METHODS } from '../operations-v03.ts';
import type { ProtocolVersion } from '../types.ts';
import type { RequestContext } from '../wire/cursor.ts';

const STREAMING = new Set([
  'SendStreamingMessage',
  'SubscribeToTask',
  'message/stream',
  'tasks/resubscribe',
]);

/** Runs one request, or one element of a batch, of either version. */
export interface Dispatch {
  run(
    req: JsonRpcRequest,
    version: ProtocolVersion,
    inBatch: boolean,
    caller: Principal,
    ctx?: RequestContext,
  ): Promise<Outcome>;
  /** One element of a batch: its answer, or null for a notification. */
  runEnvelope(e: Envelope, version: ProtocolVersion, caller: Principal): Promise<object | null>;
}

/** The JSON-RPC answer of an outcome that is not a stream. */
export function answer(id: JsonRpcId, outcome: Outcome, version: ProtocolVersion): object {
  if (isA2AError(outcome)) return rpcError(id, outcome, version);
  return rpcResult(id, 'result' in outcome ? outcome.result : null);
}

/** The error code an answer renders (null: none), for the request metrics. */
export function codeOf(outcome: Outcome): string | null {
  return isA2AError(outcome) ? outcome.code : null;
}

/** Runs requests on the node's one operation table (lib/a2a/operation-table.ts). */
export function createDispatch(
  operations: Pick<OperationTable, '1.0' | '0.3'>,
  log: Log,
): Dispatch {
  const tables: Record<ProtocolVersion, Readonly<Record<string, Operation>>> = operations;

  function lookup(method: string, version: ProtocolVersion): Operation | A2AError {
    const table = tables[version];
    if (Object.hasOwn(table, method)) return table[method]!;
    if (version === '0.3' && (V1_METHODS as readonly string[]).includes(method))
      return a2aError(
        'VERSION_NOT_SUPPORTED',
        `${method} is an A2A 1.0 method, but the request did not send A2A-Version: 1.0 (a missing header means 0.3)`,
      );
    if (version === '1.0' && (V03_METHODS as readonly string[]).includes(method))
      return a2aError(
        'METHOD_NOT_FOUND',
        `${method} is an A2A 0.3 method; with A2A-Version: 1.0 use the 1.0 names (e.g. SendMessage)`,
      );
    return a2aError('METHOD_NOT_FOUND', `Method not found: ${method.slice(0, 128)}`);
  }

  async function run(
    req: JsonRpcRequest,
    version: ProtocolVersion,
    inBatch: boolean,
    caller: Principal,
    ctx?: RequestContext,
  ): Promise<Outcome> {
    const method = lookup(req.method, version);
    if (isA2AError(method)) return method;
    if (inBatch && STREAMING.has(req.method))
      return a2aError('INVALID_REQUEST', `${req.method} streams and cannot be part of a batch`);
    try {
      return await method(req.params, req.notification, caller, ctx);
    } catch (e) {
      log('error', 'a2a method failed', {
        method: req.method,
        error: (e as Error)?.message ?? String(e),
      });
      return a2aError('INTERNAL_ERROR');
    }
  }

  async function runEnvelope(
    e: Envelope,
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<object | null> {
    if (!e.ok) return rpcError(e.id, e.error, version);
    const outcome = await run(e.request, version, true, caller);
    return e.request.notification ? null : answer(e.request.id, outcome, version);
  }

  return { run, runEnvelope };
}
