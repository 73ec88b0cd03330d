/**
 * @module lib/node/mesh-inbox-turn — one turn of a node's agent for a mesh message: the A2A message
 * it is given (in its conversation's context, continuing a task left waiting for input, with what
 * arrived unanswered), the answer as text, and the answer posted back with `replyTo` under an id
 * derived from the message, so a message handed over twice is answered once.
 */

import type { Message, SendParams, Task } from '../a2a/types.ts';
import type { Log } from '../log.ts';
import type { InboundMessage, SendRequest } from '../mesh/client.ts';
import type { SendReceipt } from '../mesh/connection.ts';
import type { ClientCode, Result } from '../mesh/errors.ts';
import type { Conversation, Threads } from './mesh-inbox-threads.ts';

/**
 * Runs one turn of the node's agent for a sender (the principal the hub proved for it, an owner
 * key, or undefined): a task or a message, or a coded refusal.
 */
export type RunTurn = (
  params: SendParams,
  sender: string | undefined,
) => Promise<{ task: Task } | { message: Message } | { code: string; message: string }>;

export type InboxOutcome = { ref: string; answered: string } | { ref: string; unanswered: string };

/** A message the agent answers, in its conversation. */
export interface Turn {
  inbound: InboundMessage;
  contextId: string;
  depth: number;
}

/** What a turn needs from its inbox. */
export interface TurnDeps {
  name: string;
  post(req: SendRequest): Promise<Result<SendReceipt, ClientCode>>;
  log: Log;
  onOutcome?: (o: InboxOutcome) => void;
  threads: Threads;
}

const MAX_ANSWER_CHARS = 16_000;

/** The answer a turn gave, as text: the status message, else the artifacts' text, else their data. */
function answerText(r: { task: Task } | { message: Message }): string {
  const texts = (parts: { text?: string; data?: unknown }[] | undefined) =>
    (parts ?? []).flatMap((p) => (typeof p.text === 'string' && p.text.trim() ? [p.text] : []));
  if ('message' in r) return texts(r.message.parts).join('\n');
  const status = texts(r.task.status.message?.parts);
  if (status.length) return status.join('\n');
  const artifacts = r.task.artifacts.flatMap((a) => texts(a.parts));
  if (artifacts.length) return artifacts.join('\n');
  const data = r.task.artifacts.flatMap((a) => a.parts.filter((p) => p.data !== undefined));
  return data.length ? JSON.stringify(data[0]!.data) : `(the task ended ${r.task.status.state})`;
}

/** Runs the agent on one message and posts its answer. */
export async function runInboxTurn(d: TurnDeps, runTurn: RunTurn, t: Turn): Promise<void> {
  const conv = d.threads.conversation(t.contextId);
  let answer = await answerFor(d, runTurn, turnParams(t, conv), conv, t.inbound.message);
  if (answer.length > MAX_ANSWER_CHARS) answer = `${answer.slice(0, MAX_ANSWER_CHARS)}…`;
  await postAnswer(d, t, answer);
}

/** The A2A message of a turn: the text, in the conversation's context, with the mesh envelope. */
function turnParams(t: Turn, conv: Conversation): SendParams {
  const m = t.inbound.message;
  return {
    message: {
      messageId: crypto.randomUUID(),
      role: 'user',
      parts: [{ text: t.inbound.text, mediaType: 'text/plain' }],
      contextId: t.contextId,
      ...(conv.openTaskId ? { taskId: conv.openTaskId } : {}),
      metadata: {
        'lume/mesh': {
          ref: m.messageRef,
          from: m.from.name,
          project: m.project,
          header: t.inbound.header,
          ...(m.replyTo ? { replyTo: m.replyTo } : {}),
          attachments: t.inbound.attachments.map((a) => a.path),
          context: conv.context.splice(0),
        },
      },
    },
    configuration: { returnImmediately: false },
  };
}

/** Runs the turn; the answer is the agent's text, or says why there is none. */
async function answerFor(
  d: TurnDeps,
  runTurn: RunTurn,
  params: SendParams,
  conv: Conversation,
  { messageRef: ref, from }: InboundMessage['message'],
): Promise<string> {
  const sender = from.principal;
  try {
    const r = await runTurn(params, sender);
    if ('code' in r) {
      conv.openTaskId = undefined;
      return `${d.name} could not take this message: ${r.code}: ${r.message}`;
    }
    conv.openTaskId =
      'task' in r && r.task.status.state === 'input-required' ? r.task.id : undefined;
    return answerText(r);
  } catch (e) {
    conv.openTaskId = undefined;
    d.log('error', 'mesh inbox: the agent turn failed', { ref, error: String(e) });
    return `${d.name} failed to answer this message`;
  }
}

/** Posts the answer: to the sender for a direct message, to the project for a broadcast. */
async function postAnswer(d: TurnDeps, t: Turn, answer: string): Promise<void> {
  const m = t.inbound.message;
  const posted = await d.post({
    target: m.target.type === 'agent' ? { type: 'agent', name: m.from.name } : { type: 'project' },
    text: answer.trim() || '(no answer)',
    replyTo: m.messageRef,
    // One answer per message, even when a reconnect hands the message over twice.
    messageId: `re-${new Bun.CryptoHasher('sha256').update(`${d.name}\n${m.project}\n${m.messageId}`).digest('hex').slice(0, 40)}`,
  });
  if (posted.ok) {
    d.threads.remember(posted.result.message.messageRef, {
      contextId: t.contextId,
      depth: t.depth + 1,
      ours: true,
    });
    d.onOutcome?.({ ref: m.messageRef, answered: posted.result.message.messageRef });
  } else {
    d.log('warn', 'mesh inbox: the answer could not be posted', {
      ref: m.messageRef,
      code: posted.error.code,
    });
    d.onOutcome?.({
      ref: m.messageRef,
      unanswered: `the answer could not be posted: ${posted.error.code}`,
    });
  }
}
