/**
 * @module lib/errors/fleet — codes of a node's capability catalog (lib/catalog/catalog.ts) and of
 * `fleet.message`, the A2A form of a fleet call (lib/fleet/message.ts).
 */

import type { ErrorSpec } from './spec.ts';

export const CATALOG_ERRORS = {
  UNKNOWN_CAPABILITY: { http: 404, message: 'this node offers no such capability' },
  BAD_ARGS: { http: 400, message: 'arguments do not match the capability' },
  USE_A2A: { http: 400, message: 'this capability runs as an A2A task, not a one-shot call' },
} as const satisfies Record<string, ErrorSpec>;

export const FLEET_MESSAGE_ERRORS = {
  A2A_NO_ROUTE: { http: 404, message: 'target is not a fleet node the hub can message' },
  // Shared with the mesh, where it means the same: a malformed request.
  A2A_BAD_REQUEST: { http: 400, message: 'the request is malformed' },
  A2A_UNREACHABLE: { http: 502, message: 'the node did not answer' },
  A2A_TIMEOUT: { http: 504, message: 'the node did not answer in time' },
  A2A_BAD_ANSWER: { http: 502, message: 'the answer is not an A2A 1.0 SendMessage result' },
  A2A_RPC_ERROR: { http: 502, message: 'the node answered with a JSON-RPC error' },
  A2A_TASK_FAILED: { http: 502, message: 'the task failed' },
  A2A_TASK_REJECTED: { http: 502, message: 'the node rejected the task' },
  A2A_INPUT_REQUIRED: { http: 502, message: 'the task needs more input' },
  A2A_NOT_COMPLETED: { http: 502, message: 'the task did not complete' },
} as const satisfies Record<string, ErrorSpec>;

export type CatalogErrorCode = keyof typeof CATALOG_ERRORS;
export type FleetMessageErrorCode = keyof typeof FLEET_MESSAGE_ERRORS;
