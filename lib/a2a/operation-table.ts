/**
 * @module lib/a2a/operation-table — the one operation table a node hands to all three bindings (as
 * the a2a-js SDK hands one request handler to its transports): the 1.0 operations, which
 * JSON-RPC, HTTP+JSON and gRPC run (with the 1.1 members for callers that ask A2A-Version 1.1,
 * and for gRPC, whose 1.0 clients skip unknown fields), and the 0.3 ones, which JSON-RPC runs too.
 */

import type { TaskEngine } from './engine/engine.ts';
import { v03Operations, type V03Method } from './operations-v03.ts';
import { v1Operations, type Operation, type V1Method } from './operations.ts';

export interface OperationTable {
  /** The 1.0 operations in the 1.0 wire form exactly (no 1.1 members: 1.0 schemas refuse them). */
  readonly '1.0': Readonly<Record<V1Method, Operation>>;
  /** The same with the 1.1 members (`generation`): for callers that ask A2A-Version 1.1, and gRPC. */
  readonly '1.1': Readonly<Record<V1Method, Operation>>;
  readonly '0.3': Readonly<Record<V03Method, Operation>>;
}

/** Built once per node; `streaming: false` makes the streaming operations refuse. */
export function createOperationTable(engine: TaskEngine, streaming: boolean): OperationTable {
  return Object.freeze({
    '1.0': Object.freeze(v1Operations(engine, streaming, false)),
    '1.1': Object.freeze(v1Operations(engine, streaming, true)),
    '0.3': Object.freeze(v03Operations(engine, streaming)),
  });
}
