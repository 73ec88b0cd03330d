/**
 * @module node/cicdkit/queries — what cicdkit answers from its snapshot (`fixtures/cicdkit/snapshot.json`)
 * and a list of commits: pipelines with their success rate, deployments, commit activity per day.
 */

import type { Commit } from './git-source.ts';

interface Pipeline {
  name: string;
  repo: string;
  branch: string;
  lastRun: {
    id: number;
    status: 'success' | 'failed' | 'running';
    startedAt: string;
    durationSec: number | null;
    trigger: string;
    commit: string;
  };
  runs30d: number;
  success30d: number;
}
interface Deployment {
  env: string;
  service: string;
  version: string;
  commit: string;
  deployedAt: string;
  status: string;
  strategy: string;
}
export interface Snapshot {
  asOf: string;
  pipelines: Pipeline[];
  deployments: Deployment[];
  commits: Commit[];
}

export const ACTIVITY_DAYS = 14;
const DAY_MS = 86_400_000;

/** Each pipeline with its 30-day success rate (null before any run), and the failing ones. */
export function pipelines(snap: Snapshot) {
  const rows = snap.pipelines.map((p) => ({
    ...p,
    successRate30d: p.runs30d ? Math.round((p.success30d / p.runs30d) * 1000) / 10 : null,
  }));
  return {
    source: 'fixture',
    asOf: snap.asOf,
    pipelines: rows,
    failing: rows.filter((p) => p.lastRun.status === 'failed').map((p) => p.name),
  };
}

/** Deployments, newest first, with how many are not healthy. */
export function deployments(snap: Snapshot) {
  const rows = [...snap.deployments].sort((a, b) => b.deployedAt.localeCompare(a.deployedAt));
  return {
    source: 'fixture',
    asOf: snap.asOf,
    deployments: rows,
    unhealthy: rows.filter((d) => d.status !== 'healthy').length,
  };
}

/** Commits per calendar day (the commit's own offset) over the window ending on the newest one. */
export function activity(commits: Commit[]) {
  const day = (c: Commit) => c.date.slice(0, 10);
  const last = Date.parse(`${commits.map(day).sort().at(-1)}T00:00:00Z`);
  const days = Array.from({ length: ACTIVITY_DAYS }, (_, i) =>
    new Date(last - (ACTIVITY_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
  const inWindow = commits.filter((c) => day(c) >= days[0]!);
  return {
    windowDays: ACTIVITY_DAYS,
    days: days.map((date) => ({ date, commits: inWindow.filter((c) => day(c) === date).length })),
    total: inWindow.length,
    authors: new Set(inWindow.map((c) => c.author)).size,
  };
}
