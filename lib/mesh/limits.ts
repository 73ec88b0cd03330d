/** @module lib/mesh/limits — every number of mesh protocol v3: versions, time limits, size caps, heartbeat and recovery bounds. */

import { positiveIntegersFromEnv } from '../limits.ts';

export const PROTOCOL_VERSION = 3;

const KiB = 1024;
const MiB = 1024 * KiB;

/** Protocol limits; the hub takes overrides (tests shorten the time limits). */
export const MESH_LIMITS = Object.freeze({
  /** First frame must be `hello` within this time, else close 1008 "hello timeout". */
  helloTimeoutMs: 5_000,
  /** The hub pings every presence this often (a WebSocket ping and a `ping` frame); clients expect a frame at least this often. */
  heartbeatMs: 10_000,
  /** A presence whose socket leaves this many pings in a row unanswered is dropped (`heartbeat_timeout`). */
  heartbeatMisses: 2,
  /** At most this many missed messages are replayed at a reconnect; past it the claim says `recovered: false`. */
  recoveryMaxMessages: 500,
  /**
   * Bytes a socket may have waiting to be sent; past it the reader is too slow and is cut:
   * `presence_left {reason: "slow_consumer"}` and close 1008 `slow_consumer`. Above one largest frame.
   */
  maxSocketBufferedBytes: 16 * MiB,
  /** Largest WebSocket text frame the hub accepts. */
  maxFrameBytes: 6 * MiB,
  /** Text plus all attachments, decoded, per message. */
  maxContentBytes: 4 * MiB,
  /** Text below this many UTF-8 bytes travels as `identity`, larger text as `gzip+base64`. */
  textPlainLimit: 32 * KiB,
  /** Attachments at or above this size are gzipped when that makes them smaller. */
  attachmentGzipMin: 32 * KiB,
  maxAttachments: 8,
  maxAttachmentNameBytes: 255,
  /** `delivery_failed.error` is cut to this many UTF-8 bytes. */
  maxDeliveryErrorBytes: 512,
  /** `POST /api/*` request body cap. */
  maxHttpBodyBytes: 2 * MiB,
  historyDefaultLimit: 50,
  historyMaxLimit: 500,
  /** Decoded content per history answer. */
  historyBudgetBytes: 4 * MiB,
  /** Open `/v1/watch` streams per hub process; one more is 503 `watch-full`. */
  maxWatchers: 256,
  /** Open `/v1/watch` streams per client address; one more is 503 `watch-full`. */
  maxWatchersPerAddress: 16,
});

export type MeshLimits = { readonly [K in keyof typeof MESH_LIMITS]: number };

/** Limits an operator may set through the environment, by variable name. */
const MESH_LIMIT_ENV = Object.freeze({
  MESH_HEARTBEAT_MS: 'heartbeatMs',
  MESH_HEARTBEAT_MISSES: 'heartbeatMisses',
  MESH_RECOVERY_MAX_MESSAGES: 'recoveryMaxMessages',
  MESH_SOCKET_BUFFER_BYTES: 'maxSocketBufferedBytes',
} as const);

/** Reads the settable limits from the environment; a value that is not a positive integer is refused with its name. */
export function meshLimitsFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; value: Partial<MeshLimits> } | { ok: false; message: string } {
  return positiveIntegersFromEnv(env, MESH_LIMIT_ENV, 9);
}
