/**
 * @module hub/mesh/cli-send — the `bun run mesh` commands that connect once and leave: `send` (one
 * message, then its delivery outcomes for a while) and `disconnect` (a remembered connection taken
 * over with its resume secret, then ended and forgotten).
 */

import { type CliIo, cliMeshClient } from './cli-io.ts';
import type { Fail, Usage } from './cli-output.ts';

export async function send(
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
  const client = cliMeshClient(io);
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

/**
 * Ends the agent's remembered connection: forgets it (the tombstone a running `connect` reads
 * before it rejoins), then takes its presence over with the resume secret and leaves. Forgetting
 * first matters: the running connect, taken over, retries at once, and found no tombstone when it
 * came before the forget, so it took the presence back and stayed.
 */
export async function disconnect(agentId: string, io: CliIo, fail: Fail): Promise<number> {
  const memory = io.defaults?.memory;
  const saved = memory ? (await memory.load())[agentId] : undefined;
  if (!memory || !saved) {
    return fail({
      code: 'A2A_CLIENT_CLOSED',
      message: `no remembered connection for agent ${agentId}${memory ? '' : ' (mesh.rememberConnections is off)'}`,
    });
  }
  await memory.forget(agentId);
  // No memory for this client: its own connect would revive the record it just forgot.
  const client = cliMeshClient(io);
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
