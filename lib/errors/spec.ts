/**
 * @module lib/errors/spec — what the registry knows of each code: its HTTP status, a default message,
 * and where one exists its JSON-RPC code and google.rpc status name.
 */

export interface ErrorSpec {
  /** The status every HTTP surface answers this code with (lib/errors/registry.ts `statusOf`). */
  http: number;
  /** The default message, for answers that give none of their own. */
  message: string;
  /** JSON-RPC error code (A2A errors only). */
  rpc?: number;
  /** google.rpc status name for the HTTP+JSON binding (A2A errors only). */
  grpc?: string;
}

/** One layer's table: code → spec. Codes are unique across every table (the registry checks). */
export type ErrorTable = Readonly<Record<string, ErrorSpec>>;
