/**
 * @module hub/mesh/cli — the `bun run mesh …` commands: hub status, projects, peers, history,
 * one-shot send and an interactive `connect`. Output goes through `io`, so tests run it in process.
 */

import { silentLog } from '../../lib/log.ts';
import { createMeshClient } from '../../lib/mesh/client.ts';
import type { ClientCode, MeshError } from '../../lib/mesh/errors.ts';
import { createHubClient, type HubClient } from '../../lib/mesh/http-client.ts';
import type { ConnectionMemory } from '../../lib/mesh/memory.ts';
import { decodeText } from '../../lib/mesh/payload.ts';
import type { MeshMessage } from '../../lib/mesh/wire.ts';

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

/** One history line: `demo:3 2025-01-01T00:00:00.000Z alice -> bob: text [files: a.txt]`. */
function formatMessage(m: MeshMessage): string {
  const to = m.target.type === 'agent' ? m.target.name : '*';
  const files = m.attachments.length
    ? ` [files: ${m.attachments.map((a) => a.name).join(', ')}]`
    : '';
  const reply = m.replyTo ? ` (reply to ${m.replyTo})` : '';
  return `${m.messageRef} ${new Date(m.createdAt).toISOString()} ${m.from.name} -> ${to}${reply}: ${decodeText(m.payload)}${files}`;
}

const fmtError = (e: MeshError<ClientCode>) => `error ${e.code}: ${e.message}`;

/** Runs one CLI command; returns the process exit code. */
export async function runMeshCli(argv: string[], io: CliIo): Promise<number> {
  const { pos, opts } = parseArgs(argv);
  const one = (k: string) => opts[k]?.at(-1);
  const http = createHubClient({ baseUrl: io.hubUrl, otherUrls: io.hubUrls, token: io.token });
  const fail = (e: MeshError<ClientCode>) => (io.err(fmtError(e)), 1);
  const usage = (msg: string) => (
    io.err(`error A2A_BAD_REQUEST: ${msg} (see: bun run mesh help)`), 2
  );
  const [cmd, sub, arg] = pos;
  const project = sub ?? io.defaults?.project ?? 'main';

  switch (cmd) {
    case undefined:
    case 'help':
      io.out(HELP);
      return 0;
    case 'hub': {
      const m = await http.meta();
      if (!m.ok) return fail(m.error);
      io.out(
        `hub ${m.result.baseUrl} protocol ${m.result.protocolVersion} pid ${m.result.pid} up since ${new Date(m.result.startedAt).toISOString()}`,
      );
      return 0;
    }
    case 'project': {
      if (sub === 'list') {
        const r = await http.listProjects();
        if (!r.ok) return fail(r.error);
        if (r.result.length === 0) io.out('no projects');
        for (const p of r.result)
          io.out([p.name, p.displayName, p.description].filter(Boolean).join('  '));
        return 0;
      }
      if (!arg) return usage(`project ${sub ?? ''} needs a name`);
      if (sub === 'create') {
        const r = await http.createProject({
          name: arg,
          displayName: one('display'),
          description: one('desc'),
          createdByCwd: process.cwd(),
        });
        if (!r.ok) return fail(r.error);
        io.out(`created project ${r.result.name}`);
        return 0;
      }
      if (sub === 'delete') {
        const r = await http.deleteProject(arg);
        if (!r.ok) return fail(r.error);
        io.out(`deleted project ${arg}`);
        return 0;
      }
      return usage(`unknown project command ${sub}`);
    }
    case 'peers': {
      const r = await http.presence(project);
      if (!r.ok) return fail(r.error);
      io.out(
        r.result.length
          ? r.result.map((p) => p.name).join('\n')
          : `nobody is present in ${project}`,
      );
      return 0;
    }
    case 'status': {
      const m = await http.meta();
      if (!m.ok) return fail(m.error);
      io.out(`hub ${m.result.baseUrl} protocol ${m.result.protocolVersion}`);
      const ps = await http.listProjects();
      if (!ps.ok) return fail(ps.error);
      for (const p of ps.result) {
        const r = await http.presence(p.name);
        const names = r.ok ? r.result.map((x) => x.name) : [];
        io.out(`${p.name}: ${names.length} present${names.length ? ` (${names.join(', ')})` : ''}`);
      }
      return 0;
    }
    case 'history': {
      const limit = one('limit');
      const r = await http.history(project, {
        before: one('before'),
        after: one('after'),
        from: one('from'),
        limit: limit === undefined ? undefined : Number(limit),
      });
      if (!r.ok) return fail(r.error);
      if (r.result.length === 0) io.out('no messages');
      for (const m of r.result) io.out(formatMessage(m));
      return 0;
    }
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

type Fail = (e: MeshError<ClientCode>) => number;
type Usage = (msg: string) => number;

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

async function send(
  pos: string[],
  opts: Record<string, string[]>,
  io: CliIo,
  fail: Fail,
  usage: Usage,
): Promise<number> {
  const [project, ...words] = pos;
  const name = opts.as?.at(-1) ?? io.defaults?.name ?? io.defaults?.agentId;
  if (!project || !name || words.length === 0)
    return usage('send needs <project> --as <name> <text>');
  const to = opts.to?.at(-1);
  const client = createMeshClient({
    hubUrl: io.hubUrl,
    hubUrls: io.hubUrls,
    token: io.token,
    log: silentLog,
    ...(io.defaults?.reconnectMs ? { reconnectMs: io.defaults.reconnectMs } : {}),
  });
  try {
    const s = await client.connect(name, project, name);
    if (s.state !== 'connected')
      return fail(s.lastError ?? { code: 'A2A_CLIENT_CONNECT', message: 'not connected' });
    const outcomes: string[] = [];
    let expected = 0;
    let allIn!: () => void;
    const done = new Promise<void>((r) => (allIn = r));
    client.on('delivery', (d) => {
      outcomes.push(`${d.status} to ${d.to}${d.status === 'failed' ? `: ${d.error}` : ''}`);
      if (outcomes.length >= expected) allIn();
    });
    const r = await client.send(name, {
      target: to ? { type: 'agent', name: to } : { type: 'project' },
      text: words.join(' '),
      attachments: opts.attach ?? [],
      replyTo: opts.reply?.at(-1),
    });
    if (!r.ok) return fail(r.error);
    expected = r.result.recipients.length;
    io.out(
      `sent ${r.result.message.messageRef} to ${r.result.recipients.join(', ') || 'nobody'}${r.result.replayed ? ' (already stored)' : ''}`,
    );
    if (expected > 0) {
      if (outcomes.length >= expected) allIn();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        done,
        new Promise<void>((res) => (timer = setTimeout(res, io.waitMs ?? 5000))),
      ]);
      clearTimeout(timer);
    }
    for (const o of outcomes) io.out(o);
    if (outcomes.length < expected)
      io.out(`no outcome yet from ${expected - outcomes.length} recipient(s)`);
    return 0;
  } finally {
    await client.close();
  }
}

/** Ends the agent's remembered connection: takes its presence over with the resume secret, then leaves and forgets it. */
async function disconnect(agentId: string, io: CliIo, fail: Fail): Promise<number> {
  const memory = io.defaults?.memory;
  const saved = memory ? (await memory.load())[agentId] : undefined;
  if (!memory || !saved) {
    return fail({
      code: 'A2A_CLIENT_CLOSED',
      message: `no remembered connection for agent ${agentId}${memory ? '' : ' (mesh.rememberConnections is off)'}`,
    });
  }
  const client = createMeshClient({
    hubUrl: io.hubUrl,
    hubUrls: io.hubUrls,
    token: io.token,
    log: silentLog,
    memory,
  });
  try {
    const s = await client.connect(agentId, saved.project, saved.name, saved);
    await client.disconnect(agentId);
    io.out(
      `disconnected ${saved.name} from ${saved.project}${s.state === 'connected' ? '' : ' (it was not present)'}; the connection is forgotten`,
    );
    return 0;
  } finally {
    await client.close();
  }
}

async function connect(
  project: string,
  name: string,
  agentId: string,
  io: CliIo,
  fail: Fail,
  usage: Usage,
): Promise<number> {
  if (!project || !name) return usage('connect needs <project> --as <name>');
  const senders = new Map<string, string>();
  const saved = io.defaults?.memory ? (await io.defaults.memory.load())[agentId] : undefined;
  const client = createMeshClient({
    hubUrl: io.hubUrl,
    hubUrls: io.hubUrls,
    token: io.token,
    log: silentLog,
    ...(io.defaults?.reconnectMs ? { reconnectMs: io.defaults.reconnectMs } : {}),
    ...(io.defaults?.memory ? { memory: io.defaults.memory } : {}),
    onInbound: (m) => {
      senders.set(m.message.messageRef, m.message.from.name);
      io.out(formatMessage(m.message));
      for (const a of m.attachments)
        io.out(`  file ${a.name} (${a.bytes} bytes) saved at ${a.path}`);
    },
  });
  let known = new Set<string>();
  client.on('change', () => {
    const now = new Set(client.peers(agentId));
    for (const p of now) if (!known.has(p)) io.out(`* ${p} is here`);
    for (const p of known) if (!now.has(p)) io.out(`* ${p} left`);
    known = now;
  });
  client.on('delivery', (d) =>
    io.out(`* ${d.status} to ${d.to}${d.status === 'failed' ? `: ${d.error}` : ''}`),
  );
  client.on('recovery', (r) => {
    if (r.replayed > 0 || !r.recovered)
      io.out(
        `* back${r.resumed ? ' under the same presence' : ''}; ${r.replayed} missed message(s) follow`,
      );
    if (!r.recovered)
      io.out(
        `* older missed messages were left out: bun run mesh history ${project} --before <first ref above>`,
      );
  });
  // `bun run mesh disconnect` of this connection ends it here too: the client stops wanting it.
  let ended!: () => void;
  const endedByDisconnect = new Promise<'ended'>((r) => (ended = () => r('ended')));
  let byDisconnect = false;
  client.on('presence-changed', (e) => {
    if (e.state === 'reconnecting') io.out(`* connection lost, retrying`);
    if (e.state !== 'stopped' || !e.error) return;
    if (e.error.code === 'A2A_CLIENT_CLOSED' && e.error.message.includes('ended by a disconnect')) {
      byDisconnect = true;
      return ended();
    }
    io.err(fmtError(e.error));
  });
  const s = await client.connect(agentId, project, name, saved);
  if (s.state !== 'connected') {
    await client.close();
    return fail(s.lastError ?? { code: 'A2A_CLIENT_CONNECT', message: 'not connected' });
  }
  known = new Set(client.peers(agentId));
  io.out(
    `connected to ${project} as ${name}; present: ${[...known].join(', ') || 'nobody else'} (/quit to leave)`,
  );
  let attachments: string[] = [];
  const typed = (io.lines ?? (async function* () {})())[Symbol.asyncIterator]();
  while (true) {
    const next = await Promise.race([typed.next(), endedByDisconnect]);
    if (next === 'ended' || next.done) break;
    const line = next.value.trim();
    if (!line) continue;
    if (line === '/quit') break;
    if (line === '/peers') {
      io.out(client.peers(agentId).join(', ') || 'nobody else');
      continue;
    }
    if (line === '/help') {
      io.out(
        '/to NAME text, /reply REF text, /attach PATH, /peers, /quit; any other line goes to everyone',
      );
      continue;
    }
    const attach = /^\/attach\s+(.+)$/.exec(line);
    if (attach) {
      attachments.push(attach[1]!);
      io.out(`* ${attach[1]} goes with the next message`);
      continue;
    }
    const to = /^\/to\s+(\S+)\s+(.+)$/.exec(line);
    const reply = /^\/reply\s+(\S+)\s+(.+)$/.exec(line);
    if (line.startsWith('/') && !to && !reply) {
      io.err('error A2A_BAD_REQUEST: unknown command; /help lists them');
      continue;
    }
    // A reply goes back to the author when they are here, otherwise to everyone.
    const replyTarget = reply && senders.get(reply[1]!);
    const target = to
      ? { type: 'agent' as const, name: to[1]! }
      : replyTarget && client.peers(agentId).includes(replyTarget)
        ? { type: 'agent' as const, name: replyTarget }
        : { type: 'project' as const };
    const r = await client.send(agentId, {
      target,
      text: to?.[2] ?? reply?.[2] ?? line,
      replyTo: reply?.[1],
      attachments,
    });
    attachments = [];
    if (!r.ok) io.err(fmtError(r.error));
    else
      io.out(
        `* sent ${r.result.message.messageRef} to ${r.result.recipients.join(', ') || 'nobody'}`,
      );
  }
  if (byDisconnect) io.out(`* disconnected ${name} from ${project} by bun run mesh disconnect`);
  await client.close();
  return 0;
}
