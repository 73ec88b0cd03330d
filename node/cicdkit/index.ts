/**
 * @module node/cicdkit/index — read-only snapshot of CI/CD: pipelines and deployments from
 * `fixtures/cicdkit/snapshot.json`, and commits from the git history of the checkout the node runs
 * in (the fixture's commits when git cannot answer). Joins through the signed peer channel only.
 */

import { PROJECT_ROOT } from '../../lib/project-root.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import { readGitLog, type Commit } from './git-source.ts';
import * as q from './queries.ts';

const SHOWN_COMMITS = 20;

interface CicdkitOptions extends Pick<NodeSetup, 'fixturesDir'> {
  /** The checkout whose history is read (default: this project's). */
  repoDir?: string;
  /** The git executable (default `git` on PATH). */
  git?: string;
}

export default defineNode((opts: CicdkitOptions) => {
  const load = jsonFixture<q.Snapshot>(`${opts.fixturesDir}/cicdkit/snapshot.json`);
  const repoDir = opts.repoDir ?? PROJECT_ROOT;
  const commits = async (): Promise<{ source: 'live' | 'fixture'; commits: Commit[] }> => {
    const live = await readGitLog({ repoDir, ...(opts.git ? { git: opts.git } : {}) });
    return live
      ? { source: 'live', commits: live }
      : { source: 'fixture', commits: load().commits };
  };

  return {
    name: 'cicdkit',
    dataPaths: [`${opts.fixturesDir}/cicdkit/snapshot.json`],
    description:
      'Read-only CI/CD snapshot: pipelines, deployments and the git history of its checkout. Joins through the signed peer channel (no A2A endpoint yet).',
    a2a: false,
    capabilities: [
      capability({
        id: 'cicd.pipelines',
        name: 'Pipelines',
        description:
          'Each pipeline with its last run (status, duration, trigger, commit) and its 30-day success rate.',
        tags: ['ci', 'pipelines'],
        keywords: ['pipeline', 'pipelines', 'build', 'builds', 'failing', 'ci'],
        readOnly: true,
        args: {},
        run: () => q.pipelines(load()),
        summarize: ({ pipelines, failing }) =>
          `${pipelines.length} pipelines, ${failing.length} failing${failing.length ? `: ${failing.join(', ')}` : ''}`,
      }),
      capability({
        id: 'cicd.deployments',
        name: 'Deployments',
        description:
          'What runs in each environment: service, version, commit, when it was deployed and its health.',
        tags: ['cd', 'deployments'],
        keywords: [
          'deploy',
          'deployment',
          'deployments',
          'release',
          'production',
          'staging',
          'version',
        ],
        readOnly: true,
        args: {},
        run: () => q.deployments(load()),
        summarize: ({ deployments, unhealthy }) => {
          const latest = deployments[0];
          return `${deployments.length} deployments, ${unhealthy} not healthy${latest ? `; latest ${latest.service} ${latest.version} to ${latest.env}` : ''}`;
        },
      }),
      capability({
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
        summarize: (r) =>
          `${r.commits.length} recent commits (${r.source}); newest: ${r.commits[0]?.subject ?? 'none'}`,
      }),
      capability({
        id: 'cicd.activity',
        name: 'Commit activity',
        description: `Commits per day over the ${q.ACTIVITY_DAYS} days ending on the newest commit, with the number of distinct authors.`,
        tags: ['git', 'activity'],
        keywords: ['activity', 'per day', 'daily', 'cadence', 'velocity', 'authors'],
        readOnly: true,
        args: {},
        run: async () => {
          const { source, commits: all } = await commits();
          return { source, ...q.activity(all) };
        },
        summarize: (a) =>
          `${a.total} commits by ${a.authors} author${a.authors === 1 ? '' : 's'} in ${q.ACTIVITY_DAYS} days (${a.source})`,
      }),
    ],
  };
});
