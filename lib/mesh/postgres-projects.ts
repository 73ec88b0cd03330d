/**
 * @module lib/mesh/postgres-projects — the project registry of the PostgreSQL mesh store: a
 * project is its `mesh_projects` row (with the sequence counter and epoch), shared by every hub.
 */

import { fail, ok } from './errors.ts';
import type { PostgresStoreContext } from './postgres-context.ts';
import { checkProjectInput, newEpoch, projectOf, type ProjectRegistry } from './store.ts';

/** The registry's operations; `flush` settles the appends made so far (before a project's messages go). */
export function postgresProjects(
  ctx: PostgresStoreContext,
  flush: () => Promise<void>,
): ProjectRegistry {
  const { sql, now } = ctx;
  return {
    async hasProject(name) {
      return (await sql`SELECT 1 FROM mesh_projects WHERE name = ${name}`).length > 0;
    },

    async getProject(name) {
      const [r] = await sql`SELECT * FROM mesh_projects WHERE name = ${name}`;
      return r ? projectOf(r) : undefined;
    },

    async createProject(input) {
      const checked = checkProjectInput(input);
      if (!checked.ok) return checked;
      const { name, displayName, description, createdByCwd } = checked.result;
      const [r] = await sql`
        INSERT INTO mesh_projects (name, display_name, description, created_by_cwd, created_at, next_sequence, epoch)
        VALUES (${name}, ${displayName}, ${description}, ${createdByCwd}, ${now()}, 1, ${newEpoch()})
        ON CONFLICT (name) DO NOTHING RETURNING *`;
      if (!r) return fail('project-conflict', `project ${name} already exists`);
      return ok(projectOf(r));
    },

    async listProjects() {
      return (await sql`SELECT * FROM mesh_projects ORDER BY name`).map(projectOf);
    },

    async deleteProject(name) {
      await flush();
      const deleted = await sql.begin(async (tx) => {
        const [p] = await tx`DELETE FROM mesh_projects WHERE name = ${name} RETURNING name`;
        if (p) await tx`DELETE FROM mesh_messages WHERE project = ${name}`;
        return Boolean(p);
      });
      return deleted;
    },
  };
}
