/**
 * @module a2a-push — webhook delivery of task updates (A2A push notifications): at least once, in order per
 * webhook, retried with backoff, `Authorization` from the config. An allow rule on the URL's host
 * keeps a node from being used to reach arbitrary hosts.
 */

import type { PushSender } from './engine.ts';
import type { PushConfig, TaskEvent } from './types.ts';
import { eventToV03 } from './wire-v03.ts';
import { eventToV1 } from './wire-v1.ts';
import type { Log } from '../log.ts';

export interface PushOptions {
  /** Host names (besides loopback) webhooks may point at; `*` allows any host. */
  allowHosts: readonly string[];
  log: Log;
  fetch?: typeof fetch;
  /** Wait before each retry; the number of entries is the number of retries. */
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

export class WebhookSender implements PushSender {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly fetch: typeof fetch;
  private readonly delays: readonly number[];
  private readonly timeoutMs: number;

  /** The allowed hosts besides loopback, each once, lower-cased (a fleet lists 127.0.0.1 per member). */
  private readonly allowHosts: readonly string[];

  constructor(private readonly opts: PushOptions) {
    this.allowHosts = [...new Set(opts.allowHosts.map((h) => h.trim().toLowerCase()))].filter((h) => h && !LOOPBACK.test(h));
    this.fetch = opts.fetch ?? fetch;
    this.delays = opts.retryDelaysMs ?? [250, 1000, 4000, 15000];
    this.timeoutMs = opts.timeoutMs ?? 5000;
  }

  refuse(raw: string): string | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'webhook URL is not a valid URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `webhook URL must use http or https, not ${url.protocol.replace(':', '')}`;
    if (url.username || url.password) return 'webhook URL must not carry credentials; use the authentication field';
    const host = url.hostname.toLowerCase();
    if (LOOPBACK.test(host) || this.allowHosts.includes('*') || this.allowHosts.includes(host)) return null;
    return `webhook host ${host} is not allowed (allowed: loopback${this.allowHosts.length ? ', ' + this.allowHosts.join(', ') : ''})`;
  }

  notify(configs: readonly PushConfig[], event: TaskEvent): void {
    for (const cfg of configs) {
      const key = `${cfg.taskId}/${cfg.id}`;
      const body = JSON.stringify(cfg.version === '1.0' ? eventToV1(event) : eventToV03(event));
      const next = (this.queues.get(key) ?? Promise.resolve()).then(() => this.deliver(cfg, body));
      this.queues.set(key, next);
      next.then(() => {
        if (this.queues.get(key) === next) this.queues.delete(key);
      });
    }
  }

  /** Resolves when every queued delivery has succeeded or given up. */
  async idle(): Promise<void> {
    while (this.queues.size) await Promise.all(this.queues.values());
  }

  private async deliver(cfg: PushConfig, body: string): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': cfg.version === '1.0' ? 'application/a2a+json' : 'application/json' };
    if (cfg.authentication) headers.Authorization = `${cfg.authentication.scheme} ${cfg.authentication.credentials ?? ''}`.trim();
    if (cfg.token) headers['X-A2A-Notification-Token'] = cfg.token;
    for (let attempt = 0; ; attempt++) {
      let outcome: string;
      try {
        const res = await this.fetch(cfg.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs), redirect: 'manual' });
        await res.body?.cancel();
        if (res.ok) return;
        outcome = `HTTP ${res.status}`;
      } catch (e) {
        outcome = (e as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
      }
      const delay = this.delays[attempt];
      // Never log the config's credentials or token; the host and path identify the webhook.
      const where = safeUrl(cfg.url);
      if (delay === undefined) {
        this.opts.log('warn', 'webhook delivery gave up', { task: cfg.taskId, config: cfg.id, url: where, outcome, attempts: attempt + 1 });
        return;
      }
      this.opts.log('info', 'webhook delivery retry', { task: cfg.taskId, config: cfg.id, url: where, outcome, attempt: attempt + 1 });
      await Bun.sleep(delay);
    }
  }
}

function safeUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid)';
  }
}
