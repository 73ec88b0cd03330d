/**
 * @module lib/a2a/push/delivery — webhook delivery of task updates (A2A push notifications): at least once, in
 * order per webhook, retried with backoff. A webhook reaches public addresses only, unless the
 * allow-list names it, checked when it is registered (its name resolved, lib/a2a/push/host-check.ts)
 * and again at the address actually connected to; deliveries have a connection
 * pool, a deadline and a waiting line of their own, so a receiver that hangs slows nothing else.
 */

import type { PushSender, WebhookUrlFailure } from '../engine/engine.ts';
import type { PushConfig, TaskEvent } from '../types.ts';
import { eventToV03 } from '../wire/v03.ts';
import { eventToV1 } from '../wire/v1.ts';
import type { Log } from '../../log.ts';
import { createGate, type Gate } from '../../net/gate.ts';
import { refuseResolved } from './host-check.ts';
import { createOutboundPolicy, type OutboundPolicy } from '../../net/outbound-policy.ts';
import { createPoster, type PostOutcome, type Poster } from '../../net/post.ts';
import { canonicalScheme } from './webhook-auth.ts';

export interface PushOptions {
  /**
   * Hosts webhooks may reach besides public addresses (PUSH_ALLOW_HOSTS): a host name, an address
   * in any spelling or a CIDR range. Loopback and private networks are refused unless listed.
   */
  allowHosts: readonly string[];
  log: Log;
  /** Wait before each retry; the number of entries is the number of retries. */
  retryDelaysMs?: readonly number[];
  /** Deadline of one attempt, connecting and answering (default 5 s). */
  timeoutMs?: number;
  /** Deliveries in flight at once, each on its own socket (default 16). */
  maxConcurrent?: number;
  /** Deliveries waiting across every webhook; further updates are dropped with a log line (default 10,000). */
  maxPending?: number;
  /** Name resolution (tests give a fixed table); default node:dns `lookup`. */
  resolveName?: (host: string) => Promise<{ address: string; family: number }[]>;
}

/** A delivery that found the waiting line full is retried like one that found no connection. */
const NO_TURN: PostOutcome = {
  ok: false,
  error: { code: 'WEBHOOK_UNREACHABLE', message: 'too many deliveries waiting for a connection' },
};

export class WebhookSender implements PushSender {
  private readonly queues = new Map<string, Promise<void>>();
  /** Webhooks that dropped an update while full, so each logs once until it drains. */
  private readonly dropping = new Set<string>();
  private readonly delays: readonly number[];
  private readonly maxPending: number;
  private readonly policy: OutboundPolicy;
  private readonly poster: Poster;
  private readonly gate: Gate;
  private pending = 0;

  constructor(private readonly opts: PushOptions) {
    this.delays = opts.retryDelaysMs ?? [250, 1000, 4000, 15000];
    this.maxPending = opts.maxPending ?? 10_000;
    this.policy = createOutboundPolicy(opts.allowHosts, opts.resolveName);
    const maxConcurrent = opts.maxConcurrent ?? 16;
    this.poster = createPoster({
      policy: this.policy,
      maxSockets: maxConcurrent,
      timeoutMs: opts.timeoutMs ?? 5000,
    });
    this.gate = createGate(maxConcurrent, this.maxPending);
  }

  refuse(raw: string): WebhookUrlFailure | undefined {
    const refused = (code: WebhookUrlFailure['code'], message: string): WebhookUrlFailure => ({
      code,
      message,
      field: 'url',
    });
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refused('WEBHOOK_URL_INVALID', 'webhook URL is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return refused(
        'WEBHOOK_URL_SCHEME',
        `webhook URL must use http or https, not ${url.protocol.replace(':', '')}`,
      );
    if (url.username || url.password)
      return refused(
        'WEBHOOK_URL_CREDENTIALS',
        'webhook URL must not carry credentials; use the authentication field',
      );
    // `new URL` has already turned every spelling of an address (2130706433, 0x7f.1, 127.1) into
    // its dotted or bracketed form; names are checked again at each connection, once resolved.
    const host = this.policy.refuseHost(url.hostname.toLowerCase());
    return host && { ...host, field: 'url' };
  }

  /** Why a webhook's host name is refused once resolved (lib/a2a/push/host-check.ts). */
  refuseResolved(raw: string): Promise<WebhookUrlFailure | undefined> {
    return refuseResolved(this.policy, raw);
  }

  notify(configs: readonly PushConfig[], event: TaskEvent): void {
    for (const cfg of configs) {
      const key = `${cfg.taskId}/${cfg.id}`;
      if (this.pending >= this.maxPending) {
        if (!this.dropping.has(key))
          this.opts.log('warn', 'webhook update dropped: too many deliveries waiting', {
            task: cfg.taskId,
            config: cfg.id,
            waiting: this.pending,
          });
        this.dropping.add(key);
        continue;
      }
      let body: string;
      try {
        // A 1.0 webhook body is the 1.0 form exactly: its receivers check it against the 1.0 schema.
        body = JSON.stringify(
          cfg.version === '1.0' ? eventToV1(event, cfg.generation === true) : eventToV03(event),
        );
      } catch (e) {
        this.opts.log('error', 'webhook update not serialisable', {
          task: cfg.taskId,
          config: cfg.id,
          error: (e as Error)?.name ?? 'unknown',
        });
        continue;
      }
      this.pending++;
      const next = (this.queues.get(key) ?? Promise.resolve())
        .then(() => this.deliver(cfg, body))
        .catch((e) =>
          this.opts.log('error', 'webhook delivery crashed', {
            task: cfg.taskId,
            config: cfg.id,
            error: (e as Error)?.name ?? 'unknown',
          }),
        )
        .finally(() => {
          this.pending--;
          if (this.queues.get(key) === next) {
            this.queues.delete(key);
            this.dropping.delete(key);
          }
        });
      this.queues.set(key, next);
    }
  }

  /** Resolves when every queued delivery has succeeded or given up. */
  async idle(): Promise<void> {
    while (this.queues.size) await Promise.all(this.queues.values());
  }

  /** Deliveries waiting or in flight, and how many are connected now. */
  stats(): { pending: number; inFlight: number } {
    return { pending: this.pending, inFlight: this.gate.active };
  }

  private async deliver(cfg: PushConfig, body: string): Promise<void> {
    const headers: Record<string, string> = {
      'Content-Type': cfg.version === '1.0' ? 'application/a2a+json' : 'application/json',
    };
    if (cfg.authentication)
      headers.Authorization =
        `${canonicalScheme(cfg.authentication.scheme)} ${cfg.authentication.credentials ?? ''}`.trim();
    if (cfg.token) headers['X-A2A-Notification-Token'] = cfg.token;
    const url = new URL(cfg.url);
    // Never log the config's credentials or token; the host and path identify the webhook.
    const where = `${url.protocol}//${url.host}${url.pathname}`;
    for (let attempt = 0; ; attempt++) {
      const result: PostOutcome =
        (await this.gate.run(() => this.poster.post(url, headers, body))) ?? NO_TURN;
      if (result.ok) return;
      const { error } = result;
      if (error.code === 'ADDRESS_REFUSED') {
        this.opts.log('warn', 'webhook delivery refused: not a public address', {
          task: cfg.taskId,
          config: cfg.id,
          url: where,
          detail: error.message,
        });
        return;
      }
      const outcome = error.status ? `HTTP ${error.status}` : error.code;
      const delay = this.delays[attempt];
      if (delay === undefined) {
        this.opts.log('warn', 'webhook delivery gave up', {
          task: cfg.taskId,
          config: cfg.id,
          url: where,
          outcome,
          attempts: attempt + 1,
        });
        return;
      }
      this.opts.log('info', 'webhook delivery retry', {
        task: cfg.taskId,
        config: cfg.id,
        url: where,
        outcome,
        attempt: attempt + 1,
      });
      await Bun.sleep(delay);
    }
  }
}
