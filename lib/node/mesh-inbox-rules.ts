/**
 * @module lib/node/mesh-inbox-rules — when a node's agent answers a mesh message: a direct message
 * unless it is an answer to the agent that asks nothing, a broadcast only when it names the agent
 * (a reply to everyone only when it mentions `@name`), and never past the replies a conversation
 * may hold.
 */

import type { InboundMessage } from '../mesh/client.ts';
import type { Thread } from './mesh-inbox-threads.ts';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Why the agent does not answer a message, or undefined when it does. */
export type Silence = (
  m: InboundMessage,
  parent: Thread | undefined,
  depth: number,
) => string | undefined;

export function silenceRule(name: string, maxReplies: number): Silence {
  // The name as a word ("lan status", "ask lan:"), and as an explicit mention ("@lan").
  const named = new RegExp(`(^|[^A-Za-z0-9._-])@?${escapeRe(name)}(?![A-Za-z0-9_-])`, 'i');
  const mentioned = new RegExp(`@${escapeRe(name)}(?![A-Za-z0-9_-])`, 'i');
  return (m, parent, depth) => {
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
        : `a reply to everyone that does not mention @${name}`;
    return named.test(text) ? undefined : `a broadcast that does not name ${name}`;
  };
}
