/**
 * @module hub/mesh/cli-io — what a `bun run mesh` command is given: where its output goes, the
 * typed lines, the hubs to ask, the token, and the client's settings.
 */

import { silentLog } from '../../lib/log.ts';
import {
  createMeshClient,
  type MeshClient,
  type MeshClientOptions,
} from '../../lib/mesh/client.ts';
import type { ConnectionMemory } from '../../lib/mesh/memory.ts';

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Lines typed by the user (for `connect`). */
  lines?: AsyncIterable<string>;
  hubUrl: string;
  /** Other hubs of the same cluster, asked when `hubUrl` cannot be reached. */
  hubUrls?: string[];
  token?: string;
  /** How long `send` waits for delivery outcomes. */
  waitMs?: number;
  /** The client's settings (config file or environment); absent ones take these defaults. */
  defaults?: CliDefaults;
}

export interface CliDefaults {
  /** The project when a command names none (default `main`). */
  project?: string;
  /** The agent whose connection `connect` remembers and `disconnect` ends, when `--agent` names none (default: the roster name). */
  agentId?: string;
  /** The roster name when `--as` is absent (default: the agent id). */
  name?: string;
  reconnectMs?: number;
  /** Remembered connections (mesh.rememberConnections); without it `disconnect` has nothing to end. */
  memory?: ConnectionMemory;
}

/** A quiet mesh client on the command's hubs and token at the configured reconnect pace; `extra` adds to it. */
export function cliMeshClient(
  io: CliIo,
  extra: Partial<Omit<MeshClientOptions, 'hubUrl'>> = {},
): MeshClient {
  return createMeshClient({
    hubUrl: io.hubUrl,
    hubUrls: io.hubUrls,
    token: io.token,
    log: silentLog,
    ...(io.defaults?.reconnectMs ? { reconnectMs: io.defaults.reconnectMs } : {}),
    ...extra,
  });
}
