/**
 * @module lib/node/mesh-inbox — a node's mesh presence hands each inbound message to the node's agent
 * as a turn, in hub sequence, and posts the answer back with `replyTo`: to the sender for a direct
 * message, to the project for a broadcast that names the agent. One A2A context per conversation
 * (a `replyTo` chain); a turn left `input-required` is continued by the next message of its
 * conversation. A message taken but not answered (a broadcast that does not name the agent, an
 * answer to the agent that asks nothing) is context for the conversation's next turn. Bounded: an
 * inbox of `queueLimit` waiting turns (past it the hub hears `failed`), `maxThreads` conversations
 * remembered, and at most `maxThreadReplies` replies in one conversation, so two agents cannot
 * answer each other forever. This file queues the turns; its parts are the threads
 * (lib/node/mesh-inbox-threads.ts), when to answer (mesh-inbox-rules.ts) and one turn
 * (mesh-inbox-turn.ts).
 */

import type { TaskEngine } from '../a2a/engine/engine.ts';
import { isA2AError } from '../a2a/errors.ts';
import { ANONYMOUS, principalOfKey, type Principal } from '../auth/principal.ts';
import type { Log } from '../log.ts';
import type { InboundMessage, SendRequest } from '../mesh/client.ts';
import type { SendReceipt } from '../mesh/connection.ts';
import type { ClientCode, Result } from '../mesh/errors.ts';
import { silenceRule } from './mesh-inbox-rules.ts';
import { createThreads } from './mesh-inbox-threads.ts';
import { runInboxTurn, type InboxOutcome, type RunTurn, type Turn } from './mesh-inbox-turn.ts';

export type { InboxOutcome, RunTurn } from './mesh-inbox-turn.ts';

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

/**
 * Turns run by the node's own engine: the tasks are the node's (`node:<name>`), invisible to every
 * A2A caller, but each turn acts for its sender, so the access policy `/a2a` applies to that
 * sender applies, and a job counts against it. The sender is the principal the hub proved for it
 * (a delivered message's `from.principal`), believed only when `trustHub` (the hub is the node's
 * fleet hub, which names principals to it anyway); a sender with none, or any sender of another
 * hub, is anonymous: a roster name alone is anyone's to claim.
 */
export function engineTurns(engine: TaskEngine, name: string, trustHub: boolean): RunTurn {
  const caller: Principal = { kind: 'node', name };
  return async (params, sender) => {
    const actingFor = trustHub ? principalOfKey(sender) : ANONYMOUS;
    const r = await engine.send({ params, version: '1.0', caller, actingFor });
    return isA2AError(r) ? { code: r.code, message: r.message } : r;
  };
}

const MAX_CONTEXT_LINES = 20;

export function createMeshInbox(o: MeshInboxOptions) {
  const queueLimit = o.queueLimit ?? 64;
  const threads = createThreads(o.maxThreads ?? 1_000);
  const silence = silenceRule(o.name, o.maxThreadReplies ?? 8);
  const deps = { name: o.name, post: o.post, log: o.log, onOutcome: o.onOutcome, threads };
  const queue: Turn[] = [];
  let runTurn: RunTurn | undefined;
  let pumping = false;

  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length) await runInboxTurn(deps, runTurn!, queue.shift()!);
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
      threads.remember(ref, { contextId, depth, ours: false });
      if (why) {
        const conv = threads.conversation(contextId);
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
