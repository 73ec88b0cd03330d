/**
 * @module hub/mesh/cli — the `bun run mesh …` commands: hub status, projects, peers, history,
 * one-shot send and an interactive `connect`. Output goes through `io`, so tests run it in process.
 * This file reads the command line and dispatches: hub/mesh/cli-reads.ts (HTTP reads),
 * cli-send.ts (send, disconnect), cli-connect.ts (connect), cli-output.ts (what they print).
 */

import { createHubClient, type HubClient } from '../../lib/mesh/http-client.ts';
import { connect } from './cli-connect.ts';
import { type Fail, fmtError, type Usage } from './cli-output.ts';
import {
  historyCommand,
  hubCommand,
  peersCommand,
  projectCommand,
  type ReadCommand,
  statusCommand,
} from './cli-reads.ts';
import { disconnect, send } from './cli-send.ts';
import type { CliIo } from './cli-io.ts';

export type { CliIo, CliDefaults } from './cli-io.ts';

const HELP = `usage: bun run mesh <command>
  hub [status]                         hub address, protocol, pid, start time
  project create <name> [--display D] [--desc T]
  project list | project delete <name>
  status                               every project with who is present
  peers [project]                      names present in a project
  history [project] [--before REF] [--after REF] [--limit N] [--from NAME]
  send <project> [--as <name>] [--to NAME] [--reply REF] [--attach PATH]... <text>
  connect [project] [--as <name>]      stay connected: prints arriving messages; type a line to broadcast,
                                       /to NAME text, /reply REF text, /attach PATH, /peers, /quit
  disconnect [--agent ID]              end the agent's remembered connection: its presence leaves and
                                       the connection is forgotten (needs mesh.rememberConnections)
  help
options: --hub URL[,URL…] (or MESH_HUB_URL; several hubs of one cluster are tried in turn), --token T (or MESH_TOKEN); the project defaults to
mesh.project (MESH_PROJECT, default main) and --as to mesh.name (MESH_NAME)`;

/** Splits argv into positionals and `--flag value` options (repeatable). */
export function parseArgs(argv: string[]): { pos: string[]; opts: Record<string, string[]> } {
  const pos: string[] = [];
  const opts: Record<string, string[]> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--') && a.length > 2) (opts[a.slice(2)] ??= []).push(argv[++i] ?? '');
    else pos.push(a);
  }
  return { pos, opts };
}

/** Runs one CLI command; returns the process exit code. */
export async function runMeshCli(argv: string[], io: CliIo): Promise<number> {
  const { pos, opts } = parseArgs(argv);
  const one = (k: string) => opts[k]?.at(-1);
  const http = createHubClient({ baseUrl: io.hubUrl, otherUrls: io.hubUrls, token: io.token });
  const fail: Fail = (e) => (io.err(fmtError(e)), 1);
  const usage: Usage = (msg) => (
    io.err(`error A2A_BAD_REQUEST: ${msg} (see: bun run mesh help)`), 2
  );
  const [first, sub, arg] = pos;
  // --help anywhere, or -h in the command's place, is help (exit 0), as in every command.
  const cmd = opts.help || first === '-h' ? 'help' : first;
  const project = sub ?? io.defaults?.project ?? 'main';
  const c: ReadCommand = { http, io, fail, usage, one };

  switch (cmd) {
    case undefined:
    case 'help':
      io.out(HELP);
      return 0;
    case 'hub':
      return hubCommand(c);
    case 'project':
      return projectCommand(c, sub, arg);
    case 'peers':
      return peersCommand(c, project);
    case 'status':
      return statusCommand(c);
    case 'history':
      return historyCommand(c, project);
    case 'send':
      return send(pos.slice(1), opts, await answeringFirst(io, http), fail, usage);
    case 'connect': {
      const name = one('as') ?? io.defaults?.name ?? io.defaults?.agentId ?? 'main';
      // Remembered under --agent, else the roster name: `disconnect --agent alice` finds `connect --as alice`.
      return connect(
        project,
        name,
        one('agent') ?? name,
        await answeringFirst(io, http),
        fail,
        usage,
      );
    }
    case 'disconnect':
      return disconnect(
        one('agent') ?? one('as') ?? io.defaults?.name ?? io.defaults?.agentId ?? 'main',
        await answeringFirst(io, http),
        fail,
      );
    default:
      return usage(`unknown command ${cmd}`);
  }
}

/**
 * With several hubs, the mesh connection starts at one that answers: the HTTP client asks them in
 * turn, and the connection then takes the rest as its failover list.
 */
async function answeringFirst(io: CliIo, http: HubClient): Promise<CliIo> {
  if (!io.hubUrls?.length) return io;
  await http.meta();
  const all = [io.hubUrl, ...io.hubUrls];
  const first = all.find((u) => u.replace(/\/+$/, '') === http.baseUrl) ?? io.hubUrl;
  return { ...io, hubUrl: first, hubUrls: all.filter((u) => u !== first) };
}
