/**
 * @module node/talentlens/queries — what the talent snapshot (`fixtures/talentlens/signals.json`)
 * answers: top developers, language momentum, trending repositories, a profile and coverage.
 */

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
interface Repo {
  fullName: string;
  language: string;
  stars: number;
  starsDelta7d: number;
  contributors: number;
  owner: string;
}
export interface Signals {
  asOf: string;
  scope: string;
  developers: Developer[];
  repos: Repo[];
}
type Profile =
  | { source: string; asOf: string; found: true; developer: Developer }
  | { source: string; asOf: string; found: false };

/** How many developers `topSignals` answers. */
export const TOP = 5;

const base = (s: Signals) => ({ source: 'fixture', asOf: s.asOf });

/** The developers with the strongest signal score. */
export function topSignals(s: Signals) {
  const developers = [...s.developers]
    .sort((a, b) => b.score - a.score)
    .slice(0, TOP)
    .map((d) => ({
      login: d.login,
      name: d.name,
      location: d.location,
      languages: d.languages,
      score: d.score,
      signals: d.signals,
      starsDelta30d: d.starsDelta30d,
    }));
  return { ...base(s), developers };
}

/** Each language with its developers and the stars they gained in 30 days, strongest first. */
export function languages(s: Signals) {
  const names = [...new Set(s.developers.flatMap((d) => d.languages))];
  const rows = names
    .map((language) => {
      const users = s.developers.filter((d) => d.languages.includes(language));
      return {
        language,
        developers: users.length,
        starsDelta30d: users.reduce((n, d) => n + d.starsDelta30d, 0),
      };
    })
    .sort((a, b) => b.starsDelta30d - a.starsDelta30d || a.language.localeCompare(b.language));
  return { ...base(s), languages: rows };
}

/** Repositories by stars gained in 7 days. */
export function trendingRepos(s: Signals) {
  return { ...base(s), repos: [...s.repos].sort((a, b) => b.starsDelta7d - a.starsDelta7d) };
}

/** What the snapshot covers, with how many developers carry each signal. */
export function status(s: Signals) {
  const bySignal: Record<string, number> = {};
  for (const sig of s.developers.flatMap((d) => d.signals))
    bySignal[sig] = (bySignal[sig] ?? 0) + 1;
  return {
    ...base(s),
    scope: s.scope,
    developers: s.developers.length,
    repos: s.repos.length,
    bySignal,
  };
}

/** One tracked developer by login (case and surrounding spaces ignored). */
export function profile(s: Signals, login: string): Profile {
  const wanted = login.trim().toLowerCase();
  const dev = s.developers.find((d) => d.login.toLowerCase() === wanted);
  return dev ? { ...base(s), found: true, developer: dev } : { ...base(s), found: false };
}
