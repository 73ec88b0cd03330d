/**
 * @module node/resolve/model — the `model` recipe's one call: the prompt (after the earlier turns of a
 * continued delegation, when there are any) to an OpenAI-compatible `/chat/completions`, the
 * answer's text back. The key goes only into the request header.
 */

import type { ModelEndpoint } from '../../lib/node/define-node.ts';

export type { ModelEndpoint };

/** An earlier exchange of a continued delegation: what was asked, what came back. */
export interface PriorTurn {
  prompt: string;
  output: string;
}

/** What one model job asks: the prompt, optionally after earlier turns, optionally another model. */
export interface ModelRequest {
  prompt: string;
  prior?: readonly PriorTurn[];
  /** Overrides the endpoint's model name for this job. */
  model?: string;
}

/** @throws Error with a message safe to store (status or reason, never the key). */
export async function askModel(
  endpoint: ModelEndpoint,
  request: ModelRequest,
  signal: AbortSignal,
  f: typeof fetch = fetch,
): Promise<string> {
  const messages = [
    ...(request.prior ?? []).flatMap((t) => [
      { role: 'user', content: t.prompt },
      { role: 'assistant', content: t.output },
    ]),
    { role: 'user', content: request.prompt },
  ];
  const res = await f(`${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(endpoint.apiKey ? { Authorization: `Bearer ${endpoint.apiKey}` } : {}),
    },
    body: JSON.stringify({ model: request.model ?? endpoint.model, messages }),
    signal,
  });
  if (!res.ok) throw new Error(`model endpoint answered HTTP ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as
    | { choices?: { message?: { content?: unknown } }[] }
    | undefined;
  const content = body?.choices?.[0]?.message?.content;
  if (typeof content !== 'string')
    throw new Error('model endpoint answered without choices[0].message.content');
  return content;
}
