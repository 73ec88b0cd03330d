/**
 * @module resolve-model — the `model` recipe's one call: the prompt to an OpenAI-compatible
 * `/chat/completions`, the answer's text back. The key goes only into the request header.
 */

import type { ModelEndpoint } from '../../lib/node/define-node.ts';

export type { ModelEndpoint };

/** @throws Error with a message safe to store (status or reason, never the key). */
export async function askModel(endpoint: ModelEndpoint, prompt: string, signal: AbortSignal, f: typeof fetch = fetch): Promise<string> {
  const res = await f(`${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(endpoint.apiKey ? { Authorization: `Bearer ${endpoint.apiKey}` } : {}) },
    body: JSON.stringify({ model: endpoint.model, messages: [{ role: 'user', content: prompt }] }),
    signal,
  });
  if (!res.ok) throw new Error(`model endpoint answered HTTP ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as { choices?: { message?: { content?: unknown } }[] } | undefined;
  const content = body?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new Error('model endpoint answered without choices[0].message.content');
  return content;
}
