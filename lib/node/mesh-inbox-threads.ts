/**
 * @module lib/node/mesh-inbox-threads — the conversations a node's mesh inbox remembers: each
 * message's thread (its A2A context, its depth of replies, whether this agent posted it), at most
 * `maxThreads` of them with the oldest forgotten first, and per conversation the task waiting for
 * input and what arrived unanswered since the last turn.
 */

export interface Thread {
  contextId: string;
  /** Replies above this message in its conversation. */
  depth: number;
  /** Posted by this agent. */
  ours: boolean;
}

export interface Conversation {
  /** A task of this conversation waiting for input: the next turn continues it. */
  openTaskId?: string;
  /** What arrived and was not answered since the last turn, as header lines. */
  context: string[];
}

export interface Threads {
  /** The thread of a message by reference. */
  get(ref: string): Thread | undefined;
  /** Remembers a message's thread (and its conversation), forgetting the oldest past the bound. */
  remember(ref: string, t: Thread): void;
  /** The conversation of a context, made when it is new. */
  conversation(contextId: string): Conversation;
}

export function createThreads(maxThreads: number): Threads {
  const threads = new Map<string, Thread>();
  const conversations = new Map<string, Conversation>();
  return {
    get: (ref) => threads.get(ref),
    remember(ref, t) {
      threads.set(ref, t);
      if (!conversations.has(t.contextId)) conversations.set(t.contextId, { context: [] });
      // Oldest first out: a Map iterates in insertion order.
      while (threads.size > maxThreads) {
        const [oldest, gone] = threads.entries().next().value as [string, Thread];
        threads.delete(oldest);
        if (![...threads.values()].some((x) => x.contextId === gone.contextId))
          conversations.delete(gone.contextId);
      }
    },
    conversation(contextId) {
      const conv = conversations.get(contextId) ?? { context: [] };
      conversations.set(contextId, conv);
      return conv;
    },
  };
}
