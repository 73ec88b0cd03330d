/**
 * @module node/tsm-hub/index — read-only snapshot of an LLM gateway: upstream health, usage, models and API
 * keys (counts and masked ids only; no key material is ever held or answered), read from
 * `fixtures/tsm-hub/gateway.json`. Joins through the signed peer channel only.
 */

import { capability } from '../../lib/catalog/capability.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import * as q from './queries.ts';

export default defineNode((opts: Pick<NodeSetup, 'fixturesDir'>) => {
  const load = jsonFixture<q.Gateway>(`${opts.fixturesDir}/tsm-hub/gateway.json`);

  return {
    name: 'tsm-hub',
    dataPaths: [`${opts.fixturesDir}/tsm-hub/gateway.json`],
    description:
      'Read-only snapshot of the LLM gateway: upstream health, usage, models and API keys (counts and masked ids only). Joins through the signed peer channel (no A2A endpoint yet).',
    a2a: false,
    capabilities: [
      capability({
        id: 'tsm.health',
        name: 'Gateway health',
        description:
          'Overall gateway state, version and uptime, and each upstream provider: up/degraded/down, p50/p95 latency, error rate over the last hour.',
        tags: ['llm-gateway', 'health'],
        keywords: ['health', 'healthy', 'status', 'upstream', 'upstreams', 'latency', 'down'],
        readOnly: true,
        args: {},
        run: () => q.health(load()),
        summarize: (h) => {
          const bad = h.upstreams
            .filter((u) => u.status !== 'up')
            .map((u) => `${u.id} ${u.status}`);
          return `Gateway ${h.status}${bad.length ? `: ${bad.join(', ')}` : ''}`;
        },
      }),
      capability({
        id: 'tsm.usage',
        name: 'Gateway usage today',
        description:
          "Today's requests, tokens in and out, cost (CNY) and error rate, per team and per hour.",
        tags: ['llm-gateway', 'usage'],
        keywords: ['usage', 'requests', 'tokens', 'cost', 'spend', 'team', 'teams'],
        readOnly: true,
        args: {},
        run: () => q.usage(load()),
        summarize: (u) => `${u.requests} requests today, ¥${u.costCny}, ${u.errorRatePct}% errors`,
      }),
      capability({
        id: 'tsm.models',
        name: 'Models in use',
        description:
          "Each model behind the gateway with today's requests, share of traffic, tokens, cost and error rate, busiest first.",
        tags: ['llm-gateway', 'models'],
        keywords: ['model', 'models', 'share', 'busiest', 'llm'],
        readOnly: true,
        args: {},
        run: () => q.models(load()),
        summarize: ({ models }) =>
          `${models.length} models; busiest ${models[0]?.id ?? 'none'} (${models[0]?.sharePct ?? 0}% of requests)`,
      }),
      capability({
        id: 'tsm.keys',
        name: 'API keys',
        description:
          'API keys by status and upstream, each shown by label, team and a masked id (last four characters); never the key itself.',
        tags: ['llm-gateway', 'keys'],
        keywords: ['key', 'keys', 'api key', 'credentials', 'revoked', 'expiring'],
        readOnly: true,
        args: {},
        run: () => q.keys(load()),
        summarize: (k) =>
          `${k.total} keys: ${Object.entries(k.byStatus)
            .map(([s, n]) => `${n} ${s}`)
            .join(', ')}`,
      }),
    ],
  };
});
