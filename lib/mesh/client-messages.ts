/**
 * @module lib/mesh/client-messages — the messages through one agent's presence: what a claim says
 * about the stream (resume secret, position, recovery), inbound messages handled in turn (position,
 * activity, attachments written to disk, the agent's handler), and sends with their local files.
 */

import type { ClientContext, Membership } from './client-context.ts';
import type { SendRequest } from './client-types.ts';
import type { ClaimedFrame, SendReceipt } from './connection.ts';
import { fail, type ClientCode, type Result } from './errors.ts';
import { materialize, snapshotFile } from './files.ts';
import { decodeText, type Attachment } from './payload.ts';
import type { MeshMessage } from './wire.ts';

/** The envelope header an agent sees above an inbound message. */
function inboundHeader(m: MeshMessage): string {
  return `[a2a message] ref=${m.messageRef} from=${m.from.name} project=${m.project} at=${new Date(m.createdAt).toISOString()}${m.replyTo ? ` replyTo=${m.replyTo}` : ''}`;
}

/** Hands one inbound message to the agent; resolves when its handler has. */
export async function handleInbound(
  ctx: ClientContext,
  m: Membership,
  message: MeshMessage,
): Promise<void> {
  const { events, o } = ctx;
  if (!m.handles(message.sequence)) return;
  m.activity.received(message.from.name);
  m.activity.handlingStarted();
  events.emit('change', { agentId: m.agentId });
  try {
    const saved = await materialize(ctx.dir, message);
    if (!saved.ok) throw new Error(saved.error.message);
    await o.onInbound?.({
      agentId: m.agentId,
      message,
      text: decodeText(message.payload),
      attachments: saved.result,
      header: inboundHeader(message),
    });
    if (o.savePositionEachMessage) await o.memory?.save(m.agentId, m.remembered());
  } finally {
    m.activity.handlingEnded();
    events.emit('change', { agentId: m.agentId });
  }
}

/** Takes in what a claim says about the stream, before any replayed message is handled. */
export function takeClaim(ctx: ClientContext, m: Membership, c: ClaimedFrame): void {
  m.claimed(c.resumeSecret, { epoch: c.epoch, since: c.recovery ? c.recovery.since : c.sequence });
  if (c.recovery) {
    ctx.events.emit('recovery', { ...c.recovery, agentId: m.agentId, resumed: c.resumed });
    if (!c.recovery.recovered)
      ctx.o.log('warn', 'mesh client: recovery was partial; older missed messages are in history', {
        agent: m.agentId,
        project: m.project,
        since: c.recovery.since,
        replayed: c.recovery.replayed,
      });
  }
}

/** Sends from an agent's presence; attachments are absolute local paths. */
export async function sendFrom(
  ctx: ClientContext,
  agentId: string,
  req: SendRequest,
): Promise<Result<SendReceipt, ClientCode>> {
  const m = ctx.members.get(agentId);
  if (!m?.conn) return fail('A2A_CLIENT_CLOSED', `${agentId} is not connected`);
  const attachments: Attachment[] = [];
  for (const path of req.attachments ?? []) {
    const a = await snapshotFile(path);
    if (!a.ok) return a;
    attachments.push(a.result);
  }
  const { inline, ...rest } = req;
  const r = await m.conn.send({ ...rest, attachments: [...attachments, ...(inline ?? [])] });
  if (r.ok) {
    m.activity.sent(r.result.recipients);
    ctx.events.emit('change', { agentId });
  }
  return r;
}
