/**
 * @module lib/a2a/operation-table — the one operation table a node hands to all three bindings (as
 * the a2a-js SDK hands one request handler to its transports): the 1.0 operations, which
 * JSON-RPC, HTTP+JSON and gRPC run, and the 0.3 ones, which JSON-RPC runs too.
 */

import type { TaskEngine } from './engine/engine.ts';
import { v03Operations, type V03Method } from './operations-v03.ts';
import { v1Operations, type Operation, type V1Method } from './operations.ts';

export interface OperationTable {
  readonly '1.0': Readonly<Record<V1Method, Operation>>;
  readonly '0.3': Readonly<Record<V03Method, Operation>>;
}

/** Built once per node; `streaming: false` makes the streaming operations refuse. */
export function createOperationTable(engine: TaskEngine, streaming: boolean): OperationTable {
  return Object.freeze({
    '1.0': Object.freeze(v1Operations(engine, streaming)),
    '0.3': Object.freeze(v03Operations(engine, streaming)),
  });
}
