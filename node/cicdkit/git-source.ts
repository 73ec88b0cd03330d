/**
 * @module node/cicdkit/git-source — the commit history cicdkit reports: `git log` of a checkout, spawned with
 * a fixed argument list (no shell), a time limit and an output cap; any failure yields undefined
 * so the node answers from its fixture instead.
 */

export interface Commit {
  hash: string;
  date: string;
  author: string;
  subject: string;
}

interface GitOptions {
  /** The checkout to read. */
  repoDir: string;
  /** The git executable (default `git` on PATH). */
  git?: string;
  /** Most commits read (default 200). */
  limit?: number;
  timeoutMs?: number;
}

const FIELD = '\x1f';
const RECORD = '\x1e';
const MAX_OUTPUT = 512 * 1024;
const MAX_SUBJECT = 200;

/** Parses `git log` output in the format below; malformed records are skipped. */
export function parseGitLog(text: string): Commit[] {
  const out: Commit[] = [];
  for (const record of text.split(RECORD)) {
    const f = record.replace(/^\n+/, '').split(FIELD);
    if (f.length !== 4 || !/^[0-9a-f]{7,64}$/.test(f[0]!) || Number.isNaN(Date.parse(f[1]!)))
      continue;
    out.push({ hash: f[0]!, date: f[1]!, author: f[2]!, subject: f[3]!.slice(0, MAX_SUBJECT) });
  }
  return out;
}

/** The newest commits of the checkout, or undefined when git is missing, fails or is too slow. */
export async function readGitLog(opts: GitOptions): Promise<Commit[] | undefined> {
  try {
    const proc = Bun.spawn({
      // Author name only: e-mail addresses stay out of answers.
      cmd: [
        opts.git ?? 'git',
        'log',
        '-n',
        String(opts.limit ?? 200),
        '--no-color',
        '--no-show-signature',
        `--format=%h${FIELD}%aI${FIELD}%an${FIELD}%s${RECORD}`,
      ],
      cwd: opts.repoDir,
      // No prompts, no optional locks: a read must never wait on or disturb the checkout.
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'ignore',
      timeout: opts.timeoutMs ?? 3000,
      killSignal: 'SIGKILL',
      maxBuffer: MAX_OUTPUT,
    });
    const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    if (code !== 0) return undefined;
    const commits = parseGitLog(text);
    return commits.length ? commits : undefined;
  } catch {
    // A missing executable or directory throws at spawn.
    return undefined;
  }
}
