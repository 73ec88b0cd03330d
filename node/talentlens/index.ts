/**
 * @module node/talentlens/index — read-only snapshot of GitHub talent signals: tracked developers ranked by
 * signal score, language momentum and trending repositories, read from
 * `fixtures/talentlens/signals.json` (public activity only; no contact details are held).
 */

import { capability } from '../../lib/catalog/capability.ts';
import { defineNode, type NodeSetup } from '../../lib/node/define-node.ts';
import { jsonFixture } from '../../lib/node/fixture-file.ts';
import * as q from './queries.ts';

export default defineNode((opts: Pick<NodeSetup, 'fixturesDir'>) => {
  const load = jsonFixture<q.Signals>(`${opts.fixturesDir}/talentlens/signals.json`);

  return {
    name: 'talentlens',
    dataPaths: [`${opts.fixturesDir}/talentlens/signals.json`],
    description:
      'Read-only snapshot of GitHub talent signals: rising developers, language momentum, trending repositories. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    capabilities: [
      capability({
        id: 'talent.signals',
        name: 'Top talent signals',
        description: `The ${q.TOP} tracked developers with the strongest signal score (star and follower growth, contribution cadence), with their signals.`,
        tags: ['talent', 'github'],
        examples: ['Who are the rising developers this month?'],
        keywords: ['talent', 'signal', 'signals', 'rising', 'developers', 'candidates', 'top'],
        readOnly: true,
        args: {},
        run: () => q.topSignals(load()),
        summarize: ({ developers }) =>
          `Top ${developers.length}: ${developers.map((d) => `${d.login} (${d.score})`).join(', ')}`,
      }),
      capability({
        id: 'talent.languages',
        name: 'Language momentum',
        description:
          'Languages of the tracked developers: how many use each and the stars they gained in 30 days, strongest momentum first.',
        tags: ['talent', 'languages'],
        keywords: ['language', 'languages', 'momentum', 'stack', 'rust', 'python', 'typescript'],
        readOnly: true,
        args: {},
        run: () => q.languages(load()),
        summarize: ({ languages }) =>
          `${languages.length} languages; strongest momentum: ${languages
            .slice(0, 3)
            .map((l) => l.language)
            .join(', ')}`,
      }),
      capability({
        id: 'talent.repos',
        name: 'Trending repositories',
        description: "Tracked developers' repositories by stars gained in the last 7 days.",
        tags: ['talent', 'github', 'repositories'],
        keywords: ['repo', 'repos', 'repository', 'repositories', 'trending', 'stars', 'projects'],
        readOnly: true,
        args: {},
        run: () => q.trendingRepos(load()),
        summarize: ({ repos }) =>
          repos[0]
            ? `${repos.length} trending repos; first ${repos[0].fullName} (+${repos[0].starsDelta7d} stars in 7 days)`
            : 'No trending repos',
      }),
      capability({
        id: 'talent.status',
        name: 'TalentLens status',
        description:
          'What the snapshot covers: date, scope, developers and repositories tracked, and how many developers carry each signal.',
        tags: ['status'],
        keywords: ['status', 'health', 'coverage', 'talentlens'],
        readOnly: true,
        args: {},
        run: () => q.status(load()),
        summarize: (s) =>
          `Snapshot ${s.asOf}: ${s.developers} developers, ${s.repos} repos tracked`,
      }),
      capability({
        id: 'talent.profile',
        name: 'Developer profile',
        description:
          'One tracked developer by GitHub login: languages, growth, contributions and signals; found:false when not tracked.',
        tags: ['talent', 'github'],
        examples: ['{"skill":"talent.profile","args":{"login":"mia-zhao"}}'],
        keywords: ['profile', 'login', 'who is'],
        readOnly: true,
        args: { login: { type: 'string', description: 'GitHub login', required: true } },
        run: (args) => q.profile(load(), args.login),
        summarize: (p) =>
          p.found
            ? `${p.developer.login}: score ${p.developer.score}, ${p.developer.languages.join('/')}`
            : 'Not a tracked developer',
      }),
    ],
  };
});
