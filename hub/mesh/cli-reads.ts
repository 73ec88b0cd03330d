/**
 * @module hub/mesh/cli-reads — the `bun run mesh` commands that only ask the hub over HTTP: `hub`,
 * `project create|list|delete`, `peers`, `status` and `history`.
 */

import type { HubClient } from '../../lib/mesh/http-client.ts';
import type { CliIo } from './cli-io.ts';
import { type Fail, formatMessage, type Usage } from './cli-output.ts';

/** What a read command is given: the hub's HTTP client, the output, and the parsed command line. */
export interface ReadCommand {
  http: HubClient;
  io: CliIo;
  fail: Fail;
  usage: Usage;
  /** The last value of an option. */
  one: (k: string) => string | undefined;
}

export async function hubCommand({ http, io, fail }: ReadCommand): Promise<number> {
  const m = await http.meta();
  if (!m.ok) return fail(m.error);
  io.out(
    `hub ${m.result.baseUrl} protocol ${m.result.protocolVersion} pid ${m.result.pid} up since ${new Date(m.result.startedAt).toISOString()}`,
  );
  return 0;
}

export async function projectCommand(
  c: ReadCommand,
  sub: string | undefined,
  arg: string | undefined,
): Promise<number> {
  const { http, io, fail, usage, one } = c;
  if (sub === 'list') {
    const r = await http.listProjects();
    if (!r.ok) return fail(r.error);
    if (r.result.length === 0) io.out('no projects');
    for (const p of r.result)
      io.out([p.name, p.displayName, p.description].filter(Boolean).join('  '));
    return 0;
  }
  if (!arg) return usage(`project ${sub ?? ''} needs a name`);
  if (sub === 'create') {
    const r = await http.createProject({
      name: arg,
      displayName: one('display'),
      description: one('desc'),
      createdByCwd: process.cwd(),
    });
    if (!r.ok) return fail(r.error);
    io.out(`created project ${r.result.name}`);
    return 0;
  }
  if (sub === 'delete') {
    const r = await http.deleteProject(arg);
    if (!r.ok) return fail(r.error);
    io.out(`deleted project ${arg}`);
    return 0;
  }
  return usage(`unknown project command ${sub}`);
}

export async function peersCommand(
  { http, io, fail }: ReadCommand,
  project: string,
): Promise<number> {
  const r = await http.presence(project);
  if (!r.ok) return fail(r.error);
  io.out(
    r.result.length ? r.result.map((p) => p.name).join('\n') : `nobody is present in ${project}`,
  );
  return 0;
}

export async function statusCommand({ http, io, fail }: ReadCommand): Promise<number> {
  const m = await http.meta();
  if (!m.ok) return fail(m.error);
  io.out(`hub ${m.result.baseUrl} protocol ${m.result.protocolVersion}`);
  const ps = await http.listProjects();
  if (!ps.ok) return fail(ps.error);
  for (const p of ps.result) {
    const r = await http.presence(p.name);
    const names = r.ok ? r.result.map((x) => x.name) : [];
    io.out(`${p.name}: ${names.length} present${names.length ? ` (${names.join(', ')})` : ''}`);
  }
  return 0;
}

export async function historyCommand(c: ReadCommand, project: string): Promise<number> {
  const { http, io, fail, one } = c;
  const limit = one('limit');
  const r = await http.history(project, {
    before: one('before'),
    after: one('after'),
    from: one('from'),
    limit: limit === undefined ? undefined : Number(limit),
  });
  if (!r.ok) return fail(r.error);
  if (r.result.length === 0) io.out('no messages');
  for (const m of r.result) io.out(formatMessage(m));
  return 0;
}
