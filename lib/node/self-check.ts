/**
 * @module lib/node/self-check — what a process checks about itself at start, printed as one line per
 * check and kept for `/readyz`: the card is valid, the catalog dispatches, the peer keys are
 * loaded, the node's data is readable (and, with a model, whether it answers). A failing check
 * says what to do.
 */

import { readFileSync, readdirSync, statSync } from 'node:fs';
import type { Catalog } from '../catalog/catalog.ts';
import type { ReadyCheck } from '../health.ts';
import type { Log } from '../log.ts';

export interface CheckLine {
  name: 'card' | 'catalog' | 'keys' | 'data' | 'model';
  /** `warn` does not make the process unready (a model that does not answer has a fallback). */
  status: 'ok' | 'fail' | 'warn';
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

export interface SelfCheckInput {
  name: string;
  card?: Record<string, unknown>;
  catalog: Catalog;
  /** Capabilities to run once (default: every read-only one without arguments). */
  probes?: string[];
  /** Whether peer keys were loaded (a fleet member); false for a standalone node (not a failure). */
  keysLoaded?: boolean;
  /** Files and folders the node reads its data from. */
  dataPaths?: readonly string[];
  /** Pings the model, when one is configured. */
  model?: () => Promise<boolean>;
}

/** `1 skill`, `8 skills`: a count with its noun in the right number. */
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const fail = (name: CheckLine['name'], detail: string, fix: string): CheckLine => ({
  name,
  status: 'fail',
  detail,
  fix,
});

/** The card's required fields: a name, an interface URL and skills with id, name, description and a tag. */
function checkCard(card: Record<string, unknown> | undefined): CheckLine {
  if (!card) return { name: 'card', status: 'ok', detail: 'no agent card (peer-only node)' };
  const skills = Array.isArray(card.skills) ? card.skills : [];
  const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  const bad = skills.filter((s) => {
    const k = s as { id?: unknown; name?: unknown; description?: unknown; tags?: unknown };
    return (
      typeof k.id !== 'string' ||
      typeof k.name !== 'string' ||
      typeof k.description !== 'string' ||
      !Array.isArray(k.tags) ||
      !k.tags.length
    );
  });
  if (
    typeof card.name !== 'string' ||
    !card.name ||
    typeof card.url !== 'string' ||
    !interfaces.length
  )
    return fail(
      'card',
      'the card lacks its name, url or interfaces',
      'give the node a name in its file and start it through serveNode or bun run node',
    );
  if (!skills.length)
    return fail(
      'card',
      'the card lists no skills',
      'declare at least one capability in the node file',
    );
  if (bad.length)
    return fail(
      'card',
      `${count(bad.length, 'skill')} ${bad.length === 1 ? 'lacks' : 'lack'} an id, name, description or tag`,
      'complete those capabilities in the node file',
    );
  return {
    name: 'card',
    status: 'ok',
    detail: `${count(skills.length, 'skill')}, ${count(interfaces.length, 'interface')}`,
  };
}

/** Runs each probe through the catalog as a caller would; any failure names the capability and its code. */
async function checkCatalog(catalog: Catalog, probes: string[] | undefined): Promise<CheckLine> {
  const ids =
    probes ??
    catalog.capabilities
      .filter((c) => c.readOnly && Object.keys(c.args).length === 0)
      .map((c) => c.id);
  // Dispatch itself: an unknown id must be refused with its code.
  const unknown = await catalog.invoke('self-check.no-such-capability', {}).catch(() => undefined);
  if (!unknown || unknown.ok || unknown.error.code !== 'UNKNOWN_CAPABILITY')
    return fail(
      'catalog',
      'dispatch does not refuse an unknown capability',
      'rebuild the catalog with new Catalog([...]) from the node file',
    );
  const failed: string[] = [];
  for (const id of ids) {
    try {
      const r = await catalog.invoke(id, {});
      if (!r.ok) failed.push(`${id} (${r.error.code})`);
    } catch (e) {
      failed.push(`${id} (threw ${(e as Error)?.name ?? 'an error'})`);
    }
  }
  if (failed.length)
    return fail(
      'catalog',
      `${failed.length} of ${count(ids.length, 'probe')} failed: ${failed.join(', ')}`,
      'fix the data or code those capabilities read; the node serves the others',
    );
  // What the catalog holds, and what ran: a hub of 8 capabilities probes only the one it names.
  const which = probes
    ? ids.length
      ? ` (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''})`
      : ''
    : ' (the read-only ones without arguments)';
  return {
    name: 'catalog',
    status: 'ok',
    detail: `${count(catalog.capabilities.length, 'capability', 'capabilities')}; ${count(ids.length, 'probe')} answered${which}`,
  };
}

/** Each path is a readable folder or a readable file; `.json` files must parse. */
function checkData(paths: readonly string[] | undefined): CheckLine {
  if (!paths?.length) return { name: 'data', status: 'ok', detail: 'no data files' };
  const problems: string[] = [];
  for (const p of paths) {
    try {
      const st = statSync(p);
      if (st.isDirectory()) readdirSync(p);
      else if (!st.isFile()) problems.push(`${p} is not a regular file`);
      else if (p.endsWith('.json')) JSON.parse(readFileSync(p, 'utf8'));
      else readFileSync(p).subarray(0, 1);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException)?.code;
      problems.push(
        code === 'ENOENT'
          ? `${p} is missing`
          : code === 'EACCES'
            ? `${p} cannot be read (permissions)`
            : e instanceof SyntaxError
              ? `${p} is not valid JSON`
              : `${p} cannot be read`,
      );
    }
  }
  if (problems.length)
    return fail(
      'data',
      problems.join('; '),
      'restore those files (the fixtures folder of the checkout) or fix their permissions, then restart',
    );
  return { name: 'data', status: 'ok', detail: `${count(paths.length, 'path')} readable` };
}

export async function selfCheck(input: SelfCheckInput): Promise<CheckLine[]> {
  const lines: CheckLine[] = [
    checkCard(input.card),
    await checkCatalog(input.catalog, input.probes),
  ];
  if (input.keysLoaded !== undefined)
    lines.push(
      input.keysLoaded
        ? { name: 'keys', status: 'ok', detail: 'peer keys loaded' }
        : {
            name: 'keys',
            status: 'ok',
            detail:
              'peer channel not configured: no fleet names this node (--join <hub URL> joins one)',
          },
    );
  lines.push(checkData(input.dataPaths));
  if (input.model) {
    const up = await input.model().catch(() => false);
    lines.push(
      up
        ? { name: 'model', status: 'ok', detail: 'the model answers: agent-backed' }
        : {
            name: 'model',
            status: 'warn',
            detail: 'the model does not answer: the keyword agent answers until it does',
            fix: 'check models.<node>.baseUrl, model and key (or MODEL_BASE_URL, MODEL_NAME, MODEL_API_KEY)',
          },
    );
  }
  return lines;
}

/**
 * Prints the lines through `out` (lib/log.ts `stdoutLog`): the text of `formatCheck`, at the level
 * its status says, with its parts as fields for a JSON reader.
 */
export function printChecks(
  out: Log,
  node: string,
  lines: readonly (Pick<CheckLine, 'detail' | 'fix'> & {
    name: string;
    status: CheckLine['status'];
  })[],
): void {
  for (const c of lines)
    out(c.status === 'ok' ? 'info' : c.status === 'warn' ? 'warn' : 'error', formatCheck(node, c), {
      node,
      check: c.name,
      status: c.status,
      detail: c.detail,
      fix: c.fix,
    });
}

/** One printed line: `self-check scanner data FAIL: … -> what to do`. */
export const formatCheck = (
  node: string,
  c: Pick<CheckLine, 'detail' | 'fix'> & { name: string; status: CheckLine['status'] },
) =>
  `self-check ${node} ${c.name} ${c.status.toUpperCase()}: ${c.detail}${c.fix && c.status !== 'ok' ? ` -> ${c.fix}` : ''}`;

/**
 * Readiness checks that answer from the latest self-check: before it has run they say so, a
 * failed line makes `/readyz` 503 with its detail and what to do.
 */
export function selfCheckReadiness(): {
  checks: Record<string, ReadyCheck>;
  record(lines: CheckLine[]): void;
} {
  let lines: CheckLine[] | undefined;
  const verdict =
    (name: CheckLine['name']): ReadyCheck =>
    () => {
      if (!lines) return 'the boot self-check has not run yet';
      const line = lines.find((l) => l.name === name);
      return line?.status !== 'fail' || `${line.detail}${line.fix ? ` -> ${line.fix}` : ''}`;
    };
  return {
    checks: { card: verdict('card'), catalog: verdict('catalog'), data: verdict('data') },
    record: (l) => void (lines = l),
  };
}
