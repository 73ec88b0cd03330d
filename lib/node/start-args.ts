/**
 * @module lib/node/start-args — the command line of `bun run node` (and the package's `lume-node`):
 * its usage text and its flags, checked before anything else is read; a wrong combination or a
 * port that is not one ends the process with the reason and exit code 2.
 */

import { parseArgs } from 'node:util';

export const usage = `Usage: bun run node --name <node> [--port <port>] [--host <address>] [--grpc-port <port|off>]
       bun run node --file <node file> [--port <port>] [--host <address>] [--grpc-port <port|off>]
                    [--join <hub URL>]

--name starts the node the fleet file names (FLEET_FILE; else DATA_DIR/fleet.json when
"bun run fleet add" wrote one; else fixtures/fleet.json).
--file starts the node a file declares (its default export is defineNode(...)); when the fleet
file names that node, it takes the fleet's port and the signed peer channel, otherwise it runs
alone on --port (default: a free port) with the peer channel off. The A2A gRPC binding listens on
--grpc-port (or GRPC_PORT; default the node's port + 1000, 0 = a free port, off = none).
--join <hub URL> (with --file) serves the node and joins it to that hub's fleet: it pins the hub's
identity and presents its card URL and public key with the bearer token in LUME_TOKEN (made on the
hub's machine: bun run keys token add <name>); a hub that is down is retried with backoff.
Settings come from lume.config.json/.yaml/.toml (or LUME_CONFIG), each overridable by its
environment variable (the README's configuration table): HOST, PORT, PEER_PUBLIC_URL, DATA_DIR,
PUSH_ALLOW_HOSTS, LOG_LEVEL, MODEL_BASE_URL, MODEL_NAME, MODEL_API_KEY, MODEL_AGENT, MODEL_PING_MS
(or MODEL_<NODE>_…: the node's model-backed agent and resolve's model recipe),
TASKS_DATABASE_URL (postgres://…: keep the node's tasks in PostgreSQL, shared by every process of
the node that names it; unset = the task log under DATA_DIR; see docs/scale-out.md),
LOG_FORMAT=json (one JSON object per log line),
the bounds of docs/limits.md (SSE_QUEUE_BYTES, TASK_CACHE_BYTES, TASK_HISTORY_MESSAGES, …), and
A2A_OPEN=1 (anonymous callers may also cancel, register webhooks and run capabilities that change
state; loopback only, for conformance runs). Bearer tokens: bun run keys token add <name>.`;

export interface StartArgs {
  /** A fleet member's name (`--name`). */
  name?: string;
  /** A node file (`--file`), as given. */
  file?: string;
  /** `--port`, else PORT (the config file's hub.port is the hub's, not a node's). */
  port?: number;
  host?: string;
  /** The hub to join (`--join`, with `--file` only). */
  joinHub?: string;
  /** `--grpc-port` as given (parsed by lib/a2a/grpc/port-setting.ts). */
  grpcPort?: string;
}

/** The flags, or the usage and exit 2 (exit 0 for --help). */
export function startArgsOrExit(argv: string[] = Bun.argv.slice(2)): StartArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      name: { type: 'string' },
      file: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      join: { type: 'string' },
      'grpc-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: false,
  });
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  const [name, file, joinHub] = [text(values.name), text(values.file), text(values.join)];
  if (values.help || (!name && !file)) {
    console.log(usage);
    process.exit(values.help ? 0 : 2);
  }
  if (joinHub !== undefined && !file) {
    console.error(
      `--join goes with --file (a --name node is in the fleet file already)\n\n${usage}`,
    );
    process.exit(2);
  }
  const portText = text(values.port) ?? (process.env.PORT || undefined);
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    console.error(`--port must be a port number, got ${portText}`);
    process.exit(2);
  }
  const [host, grpcPort] = [text(values.host), text(values['grpc-port'])];
  return {
    ...(name ? { name } : {}),
    ...(file ? { file } : {}),
    port,
    host,
    joinHub,
    grpcPort,
  };
}
