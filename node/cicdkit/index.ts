/**
 * @module cicdkit — read-only snapshot of CI/CD: pipelines and deployments from
 * `fixtures/cicdkit/snapshot.json`, and commits from the git history of the checkout the node runs
 * in (the fixture's commits when git cannot answer). Joins through the signed peer channel only.
 */

import { resolve } from 'node:path';
import { Catalog } from '../../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';
import { readGitLog, type Commit } from './git-source.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';

interface Pipeline {
  name: string;
  repo: string;
  branch: string;
  lastRun: { id: number; status: 'success' | 'failed' | 'running'; startedAt: string; durationSec: number | null; trigger: string; commit: string };
  runs30d: number;
  success30d: number;
}
interface Deployment { env: string; service: string; version: string; commit: string; deployedAt: string; status: string; strategy: string }
interface Snapshot { asOf: string; pipelines: Pipeline[]; deployments: Deployment[]; commits: Commit[] }

const ACTIVITY_DAYS = 14;
const SHOWN_COMMITS = 20;
const DAY_MS = 86_400_000;

/** Commits per calendar day (the commit's own offset) over the window ending on the newest one. */
function activity(commits: Commit[]) {
  const day = (c: Commit) => c.date.slice(0, 10);
  const last = Date.parse(`${commits.map(day).sort().at(-1)}T00:00:00Z`);
  const days = Array.from({ length: ACTIVITY_DAYS }, (_, i) => new Date(last - (ACTIVITY_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10));
  const inWindow = commits.filter((c) => day(c) >= days[0]!);
  return {
    windowDays: ACTIVITY_DAYS,
    days: days.map((date) => ({ date, commits: inWindow.filter((c) => day(c) === date).length })),
    total: inWindow.length,
    authors: new Set(inWindow.map((c) => c.author)).size,
  };
}

export default function cicdkit(opts: { fixturesDir: string; repoDir?: string; git?: string }): NodeDefinition {
  const load = jsonFixture<Snapshot>(`${opts.fixturesDir}/cicdkit/snapshot.json`);
  const repoDir = opts.repoDir ?? resolve(import.meta.dir, '../..');
  const commits = async (): Promise<{ source: 'live' | 'fixture'; commits: Commit[] }> => {
    const live = await readGitLog({ repoDir, ...(opts.git ? { git: opts.git } : {}) });
    return live ? { source: 'live', commits: live } : { source: 'fixture', commits: load().commits };
  };

  const catalog = new Catalog([
    {
      id: 'cicd.pipelines',
      name: 'Pipelines',
      description: 'Each pipeline with its last run (status, duration, trigger, commit) and its 30-day success rate.',
      tags: ['ci', 'pipelines'],
      keywords: ['pipeline', 'pipelines', 'build', 'builds', 'failing', 'ci'],
      readOnly: true,
      args: {},
      run: () => {
        const snap = load();
        const pipelines = snap.pipelines.map((p) => ({ ...p, successRate30d: p.runs30d ? Math.round((p.success30d / p.runs30d) * 1000) / 10 : null }));
        return { source: 'fixture', asOf: snap.asOf, pipelines, failing: pipelines.filter((p) => p.lastRun.status === 'failed').map((p) => p.name) };
      },
      summarize: (r) => {
        const { pipelines, failing } = r as { pipelines: unknown[]; failing: string[] };
        return `${pipelines.length} pipelines, ${failing.length} failing${failing.length ? `: ${failing.join(', ')}` : ''}`;
      },
    },
    {
      id: 'cicd.deployments',
      name: 'Deployments',
      description: 'What runs in each environment: service, version, commit, when it was deployed and its health.',
      tags: ['cd', 'deployments'],
      keywords: ['deploy', 'deployment', 'deployments', 'release', 'production', 'staging', 'version'],
      readOnly: true,
      args: {},
      run: () => {
        const snap = load();
        const deployments = [...snap.deployments].sort((a, b) => b.deployedAt.localeCompare(a.deployedAt));
        return { source: 'fixture', asOf: snap.asOf, deployments, unhealthy: deployments.filter((d) => d.status !== 'healthy').length };
      },
      summarize: (r) => {
        const { deployments, unhealthy } = r as { deployments: Deployment[]; unhealthy: number };
        const latest = deployments[0];
        return `${deployments.length} deployments, ${unhealthy} not healthy${latest ? `; latest ${latest.service} ${latest.version} to ${latest.env}` : ''}`;
      },
    },
    {
      id: 'cicd.commits',
      name: 'Recent commits',
      description: `The ${SHOWN_COMMITS} newest commits (short hash, date, author name, subject) of the checkout this node runs in; the fixture's when git cannot answer.`,
      tags: ['git', 'commits'],
      keywords: ['commit', 'commits', 'git', 'history', 'changes', 'latest'],
      readOnly: true,
      args: {},
      run: async () => {
        const { source, commits: all } = await commits();
        return { source, head: all[0]!.hash, commits: all.slice(0, SHOWN_COMMITS) };
      },
      summarize: (r) => {
        const { source, commits: cs } = r as { source: string; commits: Commit[] };
        return `${cs.length} recent commits (${source}); newest: ${cs[0]?.subject ?? 'none'}`;
      },
    },
    {
      id: 'cicd.activity',
      name: 'Commit activity',
      description: `Commits per day over the ${ACTIVITY_DAYS} days ending on the newest commit, with the number of distinct authors.`,
      tags: ['git', 'activity'],
      keywords: ['activity', 'per day', 'daily', 'cadence', 'velocity', 'authors'],
      readOnly: true,
      args: {},
      run: async () => {
        const { source, commits: all } = await commits();
        return { source, ...activity(all) };
      },
      summarize: (r) => {
        const a = r as { source: string; total: number; authors: number };
        return `${a.total} commits by ${a.authors} author${a.authors === 1 ? '' : 's'} in ${ACTIVITY_DAYS} days (${a.source})`;
      },
    },
  ]);

  return {
    name: 'cicdkit',
    description: 'Read-only CI/CD snapshot: pipelines, deployments and the git history of its checkout. Joins through the signed peer channel (no A2A endpoint yet).',
    catalog,
    agentBacked: false,
    a2a: false,
  };
}
