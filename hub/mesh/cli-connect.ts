/**
 * @module hub/mesh/cli-connect — `bun run mesh connect`: stays connected, prints arriving messages,
 * who comes and goes, delivery outcomes and recoveries, and sends each typed line (`/to`, `/reply`,
 * `/attach`, `/peers`, `/quit`); a `bun run mesh disconnect` of this connection ends it here too.
 */

import type { MeshClient } from '../../lib/mesh/client.ts';
import { type CliIo, cliMeshClient } from './cli-io.ts';
import { type Fail, fmtError, formatMessage, type Usage } from './cli-output.ts';

/** Prints who comes and goes, delivery outcomes and recoveries; `reset` takes the roster as known. */
function narrate(client: MeshClient, io: CliIo, agentId: string, project: string) {
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
  return {
    reset(): Set<string> {
      known = new Set(client.peers(agentId));
      return known;
    },
  };
}

/** Resolves when a `bun run mesh disconnect` ends this connection; prints other stops. */
function endedByDisconnect(client: MeshClient, io: CliIo) {
  let ended!: () => void;
  const promise = new Promise<'ended'>((r) => (ended = () => r('ended')));
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
  return { ended: promise, byDisconnect: () => byDisconnect };
}

/** What the typed lines share: who sent each message seen, and the files for the next send. */
interface Typing {
  client: MeshClient;
  io: CliIo;
  agentId: string;
  senders: Map<string, string>;
  attachments: string[];
}

/** One typed line: a command, or a message to send; `quit` ends the session. */
async function typedLine(t: Typing, line: string): Promise<'quit' | undefined> {
  const { client, io, agentId, senders } = t;
  if (line === '/quit') return 'quit';
  if (line === '/peers') {
    io.out(client.peers(agentId).join(', ') || 'nobody else');
    return;
  }
  if (line === '/help') {
    io.out(
      '/to NAME text, /reply REF text, /attach PATH, /peers, /quit; any other line goes to everyone',
    );
    return;
  }
  const attach = /^\/attach\s+(.+)$/.exec(line);
  if (attach) {
    t.attachments.push(attach[1]!);
    io.out(`* ${attach[1]} goes with the next message`);
    return;
  }
  const to = /^\/to\s+(\S+)\s+(.+)$/.exec(line);
  const reply = /^\/reply\s+(\S+)\s+(.+)$/.exec(line);
  if (line.startsWith('/') && !to && !reply) {
    io.err('error A2A_BAD_REQUEST: unknown command; /help lists them');
    return;
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
    attachments: t.attachments,
  });
  t.attachments = [];
  if (!r.ok) io.err(fmtError(r.error));
  else
    io.out(
      `* sent ${r.result.message.messageRef} to ${r.result.recipients.join(', ') || 'nobody'}`,
    );
}

export async function connect(
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
  const client = cliMeshClient(io, {
    // The position is kept as each message is printed: a killed connect replays only the unprinted.
    ...(io.defaults?.memory ? { memory: io.defaults.memory, savePositionEachMessage: true } : {}),
    onInbound: (m) => {
      senders.set(m.message.messageRef, m.message.from.name);
      io.out(formatMessage(m.message));
      for (const a of m.attachments)
        io.out(`  file ${a.name} (${a.bytes} bytes) saved at ${a.path}`);
    },
  });
  const roster = narrate(client, io, agentId, project);
  const stop = endedByDisconnect(client, io);
  const s = await client.connect(agentId, project, name, saved);
  if (s.state !== 'connected') {
    await client.close();
    return fail(s.lastError ?? { code: 'A2A_CLIENT_CONNECT', message: 'not connected' });
  }
  const known = roster.reset();
  io.out(
    `connected to ${project} as ${name}; present: ${[...known].join(', ') || 'nobody else'} (/quit to leave)`,
  );
  const t: Typing = { client, io, agentId, senders, attachments: [] };
  const typed = (io.lines ?? (async function* () {})())[Symbol.asyncIterator]();
  while (true) {
    const next = await Promise.race([typed.next(), stop.ended]);
    if (next === 'ended' || next.done) break;
    const line = next.value.trim();
    if (line && (await typedLine(t, line)) === 'quit') break;
  }
  if (stop.byDisconnect())
    io.out(`* disconnected ${name} from ${project} by bun run mesh disconnect`);
  await client.close();
  return 0;
}
