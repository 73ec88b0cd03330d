/**
 * @module hub/mesh/send — what a claimed presence sends: a message (its target resolved to a
 * presence or the project's members at send time, appended through the store, answered
 * `accepted` and handed to the delivery stream) and the acknowledgements of what it received.
 */

import type { MeshError } from '../../lib/mesh/errors.ts';
import type { AppendCode } from '../../lib/mesh/store.ts';
import type { ClientFrame, Target } from '../../lib/mesh/wire.ts';
import { outcome } from './departures.ts';
import type { RealtimeContext } from './realtime-context.ts';
import { peerOf, type Presence } from './roster.ts';

type MessageFrame = Extract<ClientFrame, { type: 'message' }>;

/** Where a message goes, as decided at send time. */
interface Resolved {
  target: Target;
  /** The recipients named in `accepted`. */
  names: string[];
  /** The local recipients chosen now (a later joiner never receives a broadcast). */
  frozen: Presence[];
  /** Checked inside the append: a direct message to nobody present is refused. */
  admit?: () => MeshError<AppendCode> | undefined;
}

/**
 * The target of a message frame: resolved, refused (the sender is told; undefined), or a
 * promise when the cluster's roster must be read first (then `sendNow` runs again).
 */
function resolveTarget(
  ctx: RealtimeContext,
  p: Presence,
  f: MessageFrame,
  refreshed: boolean,
): Resolved | Promise<void> | undefined {
  const t = f.target as Record<string, unknown> | null;
  if (t && typeof t === 'object' && t.type === 'agent' && typeof t.name === 'string') {
    const name = t.name;
    if (name === p.name)
      return void ctx.io.error(p.ws, 'message_rejected', 'cannot send to yourself', f.requestId);
    // Resolve the recipient's current presence before appending; a later joiner of that name is another presence.
    const here = ctx.roster.get(p.project, name);
    const presenceId = here?.presenceId ?? ctx.cluster.remoteByName(p.project, name)?.presenceId;
    if (!presenceId && ctx.cluster.shared && !refreshed)
      return ctx.cluster.refresh(p.project).then(
        () => sendNow(ctx, p, f, true),
        (e) => {
          ctx.log('warn', 'mesh: reading the cluster roster failed', {
            project: p.project,
            error: String(e),
          });
          return sendNow(ctx, p, f, true);
        },
      );
    return {
      target: presenceId ? { type: 'agent', name, presenceId } : { type: 'agent', name },
      names: presenceId ? [name] : [],
      frozen: here ? [here] : [],
      admit: () =>
        presenceId
          ? undefined
          : {
              code: 'recipient_not_present',
              message: `${name} is not present in project ${p.project}`,
            },
    };
  }
  if (t && typeof t === 'object' && t.type === 'project') {
    // The broadcast's recipients are taken now: later joiners never receive it.
    const frozen = ctx.roster.list(p.project).filter((q) => q !== p);
    return {
      target: { type: 'project' },
      names: [...frozen.map((q) => q.name), ...ctx.cluster.remote(p.project).map((q) => q.name)],
      frozen,
    };
  }
  return void ctx.io.error(
    p.ws,
    'message_rejected',
    'target must be {type:"agent", name} or {type:"project"}',
    f.requestId,
  );
}

/** Resolves the target, appends, answers `accepted` and hands the commit to the stream; a promise when it must read the roster first. */
function sendNow(
  ctx: RealtimeContext,
  p: Presence,
  f: MessageFrame,
  refreshed = false,
): Promise<void> | undefined {
  if (!p.open) return undefined;
  const resolved = resolveTarget(ctx, p, f, refreshed);
  if (!resolved || resolved instanceof Promise) return resolved;
  const { target, names, frozen, admit } = resolved;
  const rid = f.requestId;
  const draft = {
    project: p.project,
    from: peerOf(p),
    messageId: f.messageId,
    target,
    payload: f.payload,
    attachments: f.attachments,
    replyTo: f.replyTo,
  };
  ctx.store.append(draft, admit).then((r) => {
    if (!r.ok) return p.open && ctx.io.error(p.ws, r.error.code, r.error.message, rid);
    const { message, replayed } = r.result;
    if (replayed) {
      // Nothing is redelivered on an identical retry, so nobody is named as a recipient.
      if (p.open)
        ctx.io.send(p.ws, {
          type: 'accepted',
          requestId: rid,
          message,
          recipients: [],
          replayed: true,
        });
      return;
    }
    // The message is encoded once, for this frame and every delivery of it here.
    const json = JSON.stringify(message);
    if (p.open)
      ctx.io.out(
        p.ws,
        `{"type":"accepted","requestId":${JSON.stringify(rid)},"message":${json},"recipients":${JSON.stringify(names)}}`,
      );
    ctx.stream.committedHere({ message, local: { frozen }, json });
  });
  return undefined;
}

/** Sends one message; a send that must first read the cluster's roster holds the sender's later sends behind it. */
export function sendMessage(ctx: RealtimeContext, p: Presence, f: MessageFrame): void {
  p.inTurn(() => sendNow(ctx, p, f));
}

/** A `delivered` or `delivery_failed` from a recipient: its outcome goes to the sender (dropped if the sender has gone). */
export function acknowledge(
  ctx: RealtimeContext,
  p: Presence,
  f: Extract<ClientFrame, { type: 'delivered' | 'delivery_failed' }>,
): void {
  const sender = p.acked(f.messageId);
  if (sender === undefined)
    return ctx.io.error(
      p.ws,
      'invalid_frame',
      `no delivery of ${f.messageId} is waiting for an acknowledgement`,
    );
  if (f.type === 'delivered')
    outcome(ctx, sender, {
      type: 'delivery',
      messageId: f.messageId,
      to: p.name,
      status: 'delivered',
    });
  else
    outcome(ctx, sender, {
      type: 'delivery',
      messageId: f.messageId,
      to: p.name,
      status: 'failed',
      error: f.error,
    });
}
