/**
 * @module talentlens — read-only snapshot of GitHub talent signals: tracked developers ranked by
 * signal score, language momentum and trending repositories, read from
 * `fixtures/talentlens/signals.json` (public activity only; no contact details are held).
 */

import { Catalog } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/create-node.ts';
import { jsonFixture } from '../lib/node/fixture-file.ts';

interface Developer {
  login: string;
  name: string;
  location: string;
  languages: string[];
  followers: number;
  followersDelta30d: number;
  stars: number;
  starsDelta30d: number;
  contributions90d: number;
  signals: string[];
  score: number;
}
interface Repo { fullName: string; language: string; stars: number; starsDelta7d: number; contributors: number; owner: string }
interface Signals { asOf: string; scope: string; developers: Developer[]; repos: Repo[] }

const TOP = 5;

export default function talentlens(opts: { fixturesDir: string }): NodeDefinition {
  const load = jsonFixture<Signals>(`${opts.fixturesDir}/talentlens/signals.json`);
  const base = () => ({ source: 'fixture' as const, asOf: load().asOf });

  const catalog = new Catalog([
    {
      id: 'talent.signals',
      name: 'Top talent signals',
      description: `The ${TOP} tracked developers with the strongest signal score (star and follower growth, contribution cadence), with their signals.`,
      tags: ['talent', 'github'],
      examples: ['Who are the rising developers this month?'],
      keywords: ['talent', 'signal', 'signals', 'rising', 'developers', 'candidates', 'top'],
      readOnly: true,
      args: {},
      run: () => {
        const developers = [...load().developers].sort((a, b) => b.score - a.score).slice(0, TOP)
          .map((d) => ({ login: d.login, name: d.name, location: d.location, languages: d.languages, score: d.score, signals: d.signals, starsDelta30d: d.starsDelta30d }));
        return { ...base(), developers };
      },
      summarize: (r) => {
        const { developers } = r as { developers: Developer[] };
        return `Top ${developers.length}: ${developers.map((d) => `${d.login} (${d.score})`).join(', ')}`;
      },
    },
    {
      id: 'talent.languages',
      name: 'Language momentum',
      description: 'Languages of the tracked developers: how many use each and the stars they gained in 30 days, strongest momentum first.',
      tags: ['talent', 'languages'],
      keywords: ['language', 'languages', 'momentum', 'stack', 'rust', 'python', 'typescript'],
      readOnly: true,
      args: {},
      run: () => {
        const devs = load().developers;
        const names = [...new Set(devs.flatMap((d) => d.languages))];
        const languages = names.map((language) => {
          const users = devs.filter((d) => d.languages.includes(language));
          return { language, developers: users.length, starsDelta30d: users.reduce((n, d) => n + d.starsDelta30d, 0) };
        }).sort((a, b) => b.starsDelta30d - a.starsDelta30d || a.language.localeCompare(b.language));
        return { ...base(), languages };
      },
      summarize: (r) => {
        const { languages } = r as { languages: { language: string; starsDelta30d: number }[] };
        return `${languages.length} languages; strongest momentum: ${languages.slice(0, 3).map((l) => l.language).join(', ')}`;
      },
    },
    {
      id: 'talent.repos',
      name: 'Trending repositories',
      description: "Tracked developers' repositories by stars gained in the last 7 days.",
      tags: ['talent', 'github', 'repositories'],
      keywords: ['repo', 'repos', 'repository', 'repositories', 'trending', 'stars', 'projects'],
      readOnly: true,
      args: {},
      run: () => ({ ...base(), repos: [...load().repos].sort((a, b) => b.starsDelta7d - a.starsDelta7d) }),
      summarize: (r) => {
        const { repos } = r as { repos: Repo[] };
        return repos[0] ? `${repos.length} trending repos; first ${repos[0].fullName} (+${repos[0].starsDelta7d} stars in 7 days)` : 'No trending repos';
      },
    },
    {
      id: 'talent.status',
      name: 'TalentLens status',
      description: 'What the snapshot covers: date, scope, developers and repositories tracked, and how many developers carry each signal.',
      tags: ['status'],
      keywords: ['status', 'health', 'coverage', 'talentlens'],
      readOnly: true,
      args: {},
      run: () => {
        const s = load();
        const bySignal: Record<string, number> = {};
        for (const sig of s.developers.flatMap((d) => d.signals)) bySignal[sig] = (bySignal[sig] ?? 0) + 1;
        return { ...base(), scope: s.scope, developers: s.developers.length, repos: s.repos.length, bySignal };
      },
      summarize: (r) => {
        const s = r as { asOf: string; developers: number; repos: number };
        return `Snapshot ${s.asOf}: ${s.developers} developers, ${s.repos} repos tracked`;
      },
    },
    {
      id: 'talent.profile',
      name: 'Developer profile',
      description: 'One tracked developer by GitHub login: languages, growth, contributions and signals; found:false when not tracked.',
      tags: ['talent', 'github'],
      examples: ['{"skill":"talent.profile","args":{"login":"mia-zhao"}}'],
      keywords: ['profile', 'login', 'who is'],
      readOnly: true,
      args: { login: { type: 'string', description: 'GitHub login', required: true } },
      run: (args) => {
        const login = String(args.login).trim().toLowerCase();
        const dev = load().developers.find((d) => d.login.toLowerCase() === login);
        return dev ? { ...base(), found: true, developer: dev } : { ...base(), found: false };
      },
      summarize: (r) => {
        const p = r as { found: boolean; developer?: Developer };
        return p.found && p.developer ? `${p.developer.login}: score ${p.developer.score}, ${p.developer.languages.join('/')}` : 'Not a tracked developer';
      },
    },
  ]);

  return {
    name: 'talentlens',
    description: 'Read-only snapshot of GitHub talent signals: rising developers, language momentum, trending repositories. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    catalog,
    agentBacked: false,
  };
}
