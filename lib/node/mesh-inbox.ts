/**
 * @module lib/node/mesh-inbox — a node's mesh presence hands each inbound message to the node's agent
 * as a turn, in hub sequence, and posts the answer back with `replyTo`: to the sender for a direct
 * message, to the project for a broadcast that names the agent. One A2A context per conversation
 * (a `replyTo` chain); a turn left `input-required` is continued by the next message of its
 * conversation. A message taken but not answered (a broadcast that does not name the agent, an
 * answer to the agent that asks nothing) is context for the conversation's next turn. Bounded: an
 * inbox of `queueLimit` waiting turns (past it the hub hears `failed`), `maxThreads` conversations
 * remembered, and at most `maxThreadReplies` replies in one conversation, so two agents cannot
 * answer each other forever.
 */

import type { TaskEngine } from '../a2a/engine.ts';
import { isA2AError } from '../a2a/errors.ts';
import type { Message, SendParams, Task } from '../a2a/types.ts';
import type { Log } from '../log.ts';
import type { InboundMessage, SendRequest } from '../mesh/client.ts';
import type { SendReceipt } from '../mesh/connection.ts';
import type { ClientCode, Result } from '../mesh/errors.ts';

/** Runs one turn of the node's agent: a task or a message, or a coded refusal. */
export type RunTurn = (
  params: SendParams,
) => Promise<{ task: Task } | { message: Message } | { code: string; message: string }>;

export interface MeshInboxOptions {
  /** The agent's roster name (the node's name). */
  name: string;
  /** Posts from the agent's presence. */
  post(req: SendRequest): Promise<Result<SendReceipt, ClientCode>>;
  log: Log;
  /** Turns that may wait (default 64); a message past it is `failed` with the reason. */
  queueLimit?: number;
  /** Conversations remembered, oldest forgotten first (default 1 000). */
  maxThreads?: number;
  /** Replies one conversation may hold before the agent stops answering in it (default 8). */
  maxThreadReplies?: number;
  /** Sees each decision (tests, metrics): answered with a ref, or left unanswered and why. */
  onOutcome?: (o: InboxOutcome) => void;
}

export type InboxOutcome = { ref: string; answered: string } | { ref: string; unanswered: string };

interface Thread {
  contextId: string;
  /** Replies above this message in its conversation. */
  depth: number;
  /** Posted by this agent. */
  ours: boolean;
}

interface Conversation {
  /** A task of this conversation waiting for input: the next turn continues it. */
  openTaskId?: string;
  /** What arrived and was not answered since the last turn, as header lines. */
  context: string[];
}

interface Turn {
  inbound: InboundMessage;
  contextId: string;
  depth: number;
}

/**
 * Turns run by the node's own engine, as the node itself (`node:<name>`): the tasks are the
 * node's, invisible to every A2A caller, and its model's mesh tools read only (docs/security.md).
 */
export function engineTurns(engine: TaskEngine, name: string): RunTurn {
  return async (params) => {
    const r = await engine.send({ params, version: '1.0', caller: { kind: 'node', name } });
    return isA2AError(r) ? { code: r.code, message: r.message } : r;
  };
}

const MAX_CONTEXT_LINES = 20;
const MAX_ANSWER_CHARS = 16_000;

/** The answer a turn gave, as text: the status message, else the artifacts' text, else their data. */
export function answerText(r: { task: Task } | { message: Message }): string {
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

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function createMeshInbox(o: MeshInboxOptions) {
  const queueLimit = o.queueLimit ?? 64;
  const maxThreads = o.maxThreads ?? 1_000;
  const maxReplies = o.maxThreadReplies ?? 8;
  // The name as a word ("lan status", "ask lan:"), and as an explicit mention ("@lan").
  const named = new RegExp(`(^|[^A-Za-z0-9._-])@?${escapeRe(o.name)}(?![A-Za-z0-9_-])`, 'i');
  const mentioned = new RegExp(`@${escapeRe(o.name)}(?![A-Za-z0-9_-])`, 'i');
  const threads = new Map<string, Thread>();
  const conversations = new Map<string, Conversation>();
  const queue: Turn[] = [];
  let runTurn: RunTurn | undefined;
  let pumping = false;

  const remember = (ref: string, t: Thread) => {
    threads.set(ref, t);
    if (!conversations.has(t.contextId)) conversations.set(t.contextId, { context: [] });
    // Oldest first out: a Map iterates in insertion order.
    while (threads.size > maxThreads) {
      const [oldest, gone] = threads.entries().next().value as [string, Thread];
      threads.delete(oldest);
      if (![...threads.values()].some((x) => x.contextId === gone.contextId))
        conversations.delete(gone.contextId);
    }
  };

  /** Why the agent does not answer this message, or undefined when it does. */
  function silence(
    m: InboundMessage,
    parent: Thread | undefined,
    depth: number,
  ): string | undefined {
    if (depth >= maxReplies) return `the conversation already holds ${maxReplies} replies`;
    const text = m.text;
    if (m.message.target.type === 'agent') {
      // An answer to the agent is answered only when it asks something again.
      if (parent?.ours && !mentioned.test(text) && !/\?\s*$/.test(text.trim()))
        return 'an answer to this agent that asks nothing';
      return undefined;
    }
    if (m.message.replyTo)
      return mentioned.test(text)
        ? undefined
        : `a reply to everyone that does not mention @${o.name}`;
    return named.test(text) ? undefined : `a broadcast that does not name ${o.name}`;
  }

  async function turn(t: Turn): Promise<void> {
    const m = t.inbound.message;
    const conv = conversations.get(t.contextId) ?? { context: [] };
    conversations.set(t.contextId, conv);
    const params: SendParams = {
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
    let answer: string;
    try {
      const r = await runTurn!(params);
      if ('code' in r) {
        conv.openTaskId = undefined;
        answer = `${o.name} could not take this message: ${r.code}: ${r.message}`;
      } else {
        conv.openTaskId =
          'task' in r && r.task.status.state === 'input-required' ? r.task.id : undefined;
        answer = answerText(r);
      }
    } catch (e) {
      conv.openTaskId = undefined;
      o.log('error', 'mesh inbox: the agent turn failed', { ref: m.messageRef, error: String(e) });
      answer = `${o.name} failed to answer this message`;
    }
    if (answer.length > MAX_ANSWER_CHARS) answer = `${answer.slice(0, MAX_ANSWER_CHARS)}…`;
    const posted = await o.post({
      target:
        m.target.type === 'agent' ? { type: 'agent', name: m.from.name } : { type: 'project' },
      text: answer.trim() || '(no answer)',
      replyTo: m.messageRef,
      // One answer per message, even when a reconnect hands the message over twice.
      messageId: `re-${new Bun.CryptoHasher('sha256').update(`${o.name}\n${m.project}\n${m.messageId}`).digest('hex').slice(0, 40)}`,
    });
    if (posted.ok) {
      remember(posted.result.message.messageRef, {
        contextId: t.contextId,
        depth: t.depth + 1,
        ours: true,
      });
      o.onOutcome?.({ ref: m.messageRef, answered: posted.result.message.messageRef });
    } else {
      o.log('warn', 'mesh inbox: the answer could not be posted', {
        ref: m.messageRef,
        code: posted.error.code,
      });
      o.onOutcome?.({
        ref: m.messageRef,
        unanswered: `the answer could not be posted: ${posted.error.code}`,
      });
    }
  }

  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length) await turn(queue.shift()!);
    } finally {
      pumping = false;
    }
  }

  return {
    /** The node's agent, once the node serves: until then every message is `failed`. */
    attach(run: RunTurn): void {
      runTurn = run;
    },

    /** Turns waiting behind the running one. */
    get waiting(): number {
      return queue.length;
    },

    /**
     * Takes one inbound message (the mesh client's handler: it resolves once the agent has it,
     * and the hub hears `delivered`; a throw is `failed` with the reason).
     * @throws when the agent is not running yet or its inbox is full.
     */
    take(m: InboundMessage): void {
      if (!runTurn) throw new Error(`${o.name}'s agent is not running yet`);
      const ref = m.message.messageRef;
      const parent = m.message.replyTo ? threads.get(m.message.replyTo) : undefined;
      const depth = parent ? parent.depth + 1 : m.message.replyTo ? 1 : 0;
      const why = silence(m, parent, depth);
      if (!why && queue.length >= queueLimit)
        throw new Error(
          `A2A_INBOX_FULL: ${queueLimit} messages already wait for ${o.name}'s agent; send it again later`,
        );
      const contextId = parent?.contextId ?? crypto.randomUUID();
      remember(ref, { contextId, depth, ours: false });
      if (why) {
        const conv = conversations.get(contextId)!;
        conv.context.push(`${m.header}\n${m.text}`.slice(0, 2_000));
        if (conv.context.length > MAX_CONTEXT_LINES) conv.context.shift();
        o.onOutcome?.({ ref, unanswered: why });
        return;
      }
      queue.push({ inbound: m, contextId, depth });
      void pump();
    },
  };
}
