/**
 * Test support: the resolve node with its executor on port 0, signed calls to it as the hub, a
 * recipe file of short test recipes (the demo script with test settings), and process checks.
 */

import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFleet, type Fleet } from '../../lib/config/fleet-file.ts';
import { createPeerClient, type PeerClient, type PeerResult } from '../../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../../lib/peer/keys.ts';
import type { Job } from '../../node/resolve/jobs.ts';
import type { ModelEndpoint } from '../../node/resolve/model.ts';
import resolve from '../../node/resolve/index.ts';
import { FIXTURES, startNode, tempDir, TEST_TOKEN, type TestNode } from './node.ts';
import { TokenBook } from '../../lib/auth/tokens.ts';
import type { AnonymousAccess } from '../../lib/auth/access.ts';

const demo = (name: string, env: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  name,
  description: `test: ${name}`,
  keywords: [],
  argv: ['{bun}', '{root}/fixtures/resolve/demo.ts'],
  env,
  prompt: 'env',
  ...extra,
});

/** The real recipes (scripts from fixtures/resolve), the demo made short, and test-only recipes. */
export function writeTestRecipes(dir: string): string {
  const real = JSON.parse(readFileSync(join(FIXTURES, 'resolve/recipes.json'), 'utf8')).recipes as {
    name: string;
    argv: string[];
    env?: Record<string, string>;
  }[];
  const recipes = real.map((r) => ({
    ...r,
    argv: r.argv.map((a) => a.replace('{recipes}', '{root}/fixtures/resolve')),
    ...(r.name === 'demo' ? { env: { DEMO_STEPS: '3', DEMO_STEP_MS: '20' } } : {}),
  }));
  recipes.push(
    demo('slow', { DEMO_STEPS: '400', DEMO_STEP_MS: '50', DEMO_CHILD: '1' }),
    demo('hang', { DEMO_STEPS: '400', DEMO_STEP_MS: '50' }, { timeoutMs: 300 }),
    demo(
      'flood',
      { DEMO_STEPS: '0', DEMO_STEP_MS: '0', DEMO_FILL: '50000' },
      { maxOutputBytes: 1000 },
    ),
    demo('broken', { DEMO_STEPS: '0', DEMO_STEP_MS: '0', DEMO_EXIT: '3' }),
    {
      name: 'echo',
      description: 'test: the prompt on stdin, printed back',
      keywords: [],
      argv: ['cat'],
      prompt: 'stdin',
    } as never,
    {
      name: 'printenv',
      description: 'test: the environment a job sees',
      keywords: [],
      argv: ['env'],
      env: { EXTRA: 'fixed' },
    } as never,
  );
  const file = join(dir, 'recipes.json');
  writeFileSync(file, JSON.stringify({ recipes }, null, 2));
  return file;
}

export interface ExecutorNode {
  node: TestNode;
  dataDir: string;
  jobsDir: string;
  hub: PeerClient;
  /** A signed call as the hub, optionally naming the principal it acts for. */
  call(capability: string, args: unknown, onBehalfOf?: string): Promise<PeerResult>;
  /** The result of a call that must succeed. */
  ok(capability: string, args: unknown): Promise<any>;
  status(id: string): Promise<Job>;
  /** Asks exec.status until `until` holds; every try is a real call, and tries are bounded. */
  waitFor(id: string, until: (job: Job) => boolean): Promise<Job>;
  /** Stops the server (jobs keep running, as when the process dies); once only. */
  stop(): Promise<void>;
}

/** Starts resolve on `dataDir` (fresh when absent), keys made there, called as the hub `a2a`. */
export async function startExecutor(
  opts: {
    dataDir?: string;
    model?: ModelEndpoint;
    fetch?: typeof fetch;
    tokens?: Record<string, string>;
    anonymous?: AnonymousAccess;
  } = {},
): Promise<ExecutorNode> {
  const dataDir = opts.dataDir ?? tempDir('lume-a2a-exec-');
  const doc = {
    hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
    nodes: [{ name: 'resolve', port: 1, role: 'resolve', file: 'node/resolve/index.ts' }],
  };
  await ensureKeys(dataDir, parseFleet(doc));
  const recipesDir = tempDir('lume-a2a-recipes-');
  const recipesFile = writeTestRecipes(recipesDir);
  const def = resolve({
    fixturesDir: FIXTURES,
    dataDir,
    recipesFile,
    ...(opts.model ? { model: opts.model } : {}),
    exec: { killGraceMs: 200, ...(opts.fetch ? { fetch: opts.fetch } : {}) },
  });
  const node = await startNode(def, {
    dataDir,
    // The fleet names the hub, the one node besides the ring's relays that may act for others.
    peer: {
      verifier: (await loadPeerIdentity(dataDir, 'resolve')).verifier,
      fleet: parseFleet(doc),
    },
    ...(opts.tokens
      ? {
          access: {
            tokens: TokenBook.of({ tester: TEST_TOKEN, ...opts.tokens }),
            ...(opts.anonymous ? { anonymous: opts.anonymous } : {}),
          },
        }
      : {}),
  });
  const fleet: Fleet = parseFleet({ ...doc, nodes: [{ ...doc.nodes[0]!, url: node.url }] });
  const hub = createPeerClient({ signer: (await loadPeerIdentity(dataDir, 'a2a')).signer, fleet });
  const call = (capability: string, args: unknown, onBehalfOf?: string) =>
    hub.peerFetch('resolve', capability, args, onBehalfOf ? { onBehalfOf } : {});
  const ok = async (capability: string, args: unknown) => {
    const r = await call(capability, args);
    if (!r.ok) throw new Error(`${capability}: ${r.error.code} ${r.error.message}`);
    return r.result as any;
  };
  let stopped = false;
  const status = async (id: string) => (await ok('exec.status', { job_id: id })).job as Job;
  return {
    node,
    dataDir,
    jobsDir: join(dataDir, 'resolve', 'jobs'),
    hub,
    call,
    ok,
    status,
    async waitFor(id, until) {
      let job = await status(id);
      for (let i = 0; i < 20_000 && !until(job); i++) job = await status(id);
      if (!until(job))
        throw new Error(`job ${id} never reached the awaited state: ${JSON.stringify(job)}`);
      return job;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await node.stop();
      rmSync(recipesDir, { recursive: true, force: true });
    },
  };
}

/** True while `pid` is a live process; a zombie (dead, not yet reaped by init) is not running. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether a pid exists at all (kill 0 succeeds). */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of this test process's direct children (Linux), to see that nothing was spawned. */
export function children(): number[] {
  try {
    const tasks = readdirSync(`/proc/${process.pid}/task`);
    return tasks.flatMap((t) =>
      readFileSync(`/proc/${process.pid}/task/${t}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}
