/**
 * @module lib/mesh/sqlite-projects — the project registry of the SQLite mesh store: projects are
 * rows with their next sequence and epoch, mirrored in the store's heads in memory.
 */

import { fail, ok } from './errors.ts';
import type { SqliteStoreContext } from './sqlite-context.ts';
import {
  checkProjectInput,
  newEpoch,
  projectOf,
  type ProjectRegistry,
  type Project,
} from './store.ts';

type ProjectRow = Parameters<typeof projectOf>[0];

/** The registry's operations; `flush` commits the open group (before a project's messages go). */
export function sqliteProjects(ctx: SqliteStoreContext, flush: () => void): ProjectRegistry {
  const { db, next, epochs, now, durable } = ctx;
  const getProject = (name: string): Project | undefined => {
    const r = db.query('SELECT * FROM projects WHERE name = ?').get(name) as ProjectRow | null;
    return r ? projectOf(r) : undefined;
  };
  return {
    hasProject: async (name) => next.has(name),
    getProject: async (name) => getProject(name),

    async createProject(input) {
      const checked = checkProjectInput(input);
      if (!checked.ok) return checked;
      const { name, displayName, description, createdByCwd } = checked.result;
      if (next.has(name)) return fail('project-conflict', `project ${name} already exists`);
      const epoch = newEpoch();
      db.query(
        'INSERT INTO projects (name, display_name, description, created_by_cwd, created_at, next_sequence, epoch) VALUES (?,?,?,?,?,1,?)',
      ).run(name, displayName, description, createdByCwd, now(), epoch);
      next.set(name, 1);
      epochs.set(name, epoch);
      durable?.set(name, 0);
      await ctx.sync?.settled();
      return ok(getProject(name)!);
    },

    async listProjects() {
      return (db.query('SELECT * FROM projects ORDER BY name').all() as ProjectRow[]).map(
        projectOf,
      );
    },

    async deleteProject(name) {
      flush();
      // The project's last group is on disk before it goes, so none of its sequences outlive it.
      await ctx.sync?.settled().catch(() => {});
      if (!next.has(name)) return false;
      db.transaction(() => {
        db.query('DELETE FROM messages WHERE project = ?').run(name);
        db.query('DELETE FROM projects WHERE name = ?').run(name);
      })();
      next.delete(name);
      epochs.delete(name);
      durable?.delete(name);
      await ctx.sync?.settled();
      return true;
    },
  };
}
