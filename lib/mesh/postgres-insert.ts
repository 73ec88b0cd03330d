/**
 * @module lib/mesh/postgres-insert — the one transaction that commits a group of messages on
 * PostgreSQL: per project its counter row allocates the sequences (the row lock orders the hubs,
 * so sequences stay gap-free), the messages are inserted, and each project's new head is
 * announced on the mesh channel, which PostgreSQL delivers only if the transaction commits.
 */

import type { SQL } from 'bun';
import { commitNotePrefix } from './postgres-notes.ts';
import { MESH_CHANNEL } from './postgres-schema.ts';
import { messageToValues } from './rows.ts';
import { idKey, sequenced, type CheckedDraft } from './store.ts';

/** A message of a group, checked and stamped, without its sequence yet. */
export interface GroupItem {
  checked: CheckedDraft;
  createdAt: number;
}

/** Thrown inside a group's transaction to roll it back: these messages (their idKey) reply to a sequence that does not exist yet. */
export class BadReplies extends Error {
  constructor(readonly ids: Set<string>) {
    super('replies to unknown sequences');
  }
}

/**
 * One transaction: per project (in name order, so two hubs lock counters in the same order) the
 * counter row is advanced by the group's size and the messages are inserted with the sequences
 * it gave; then each project's new head is announced. Statements are pipelined.
 * @returns idKey(project, messageId) -> sequence for what was inserted (a project that does not exist inserts nothing).
 * @throws BadReplies when a message replies to a sequence not before its own (nothing is committed).
 */
export async function insertGroup(
  sql: SQL,
  origin: string,
  items: GroupItem[],
): Promise<Map<string, number>> {
  const byProject = new Map<string, GroupItem[]>();
  for (const p of items) {
    const list = byProject.get(p.checked.candidate.project);
    if (list) list.push(p);
    else byProject.set(p.checked.candidate.project, [p]);
  }
  const projects = [...byProject.keys()].sort();
  return sql.begin(async (tx) => {
    const inserts = projects.map((project) => insertProject(tx, project, byProject.get(project)!));
    const announce = tx`
      SELECT pg_notify(${MESH_CHANNEL}, ${commitNotePrefix(origin)} || name || ${'\t'} || (next_sequence - 1))
      FROM mesh_projects WHERE name = ANY(${projects}::text[])`;
    const results = await Promise.all([...inserts, announce]);
    const sequences = new Map<string, number>();
    const bad = new Set<string>();
    projects.forEach((project, i) => {
      const [r] = results[i] as { first: string | number | null; bad_replies: string[] }[];
      // Sequences have no gaps, so a reply is valid exactly when it names an earlier sequence.
      for (const id of r?.bad_replies ?? []) bad.add(idKey(project, id));
      if (r?.first === null || r?.first === undefined) return;
      const first = Number(r.first);
      byProject
        .get(project)!
        .forEach((p, k) => sequences.set(idKey(project, p.checked.messageId), first + k));
    });
    if (bad.size > 0) throw new BadReplies(bad);
    return sequences;
  });
}

/**
 * One project's statement of the transaction. It answers one row: the first sequence it allocated
 * (null for an unknown project) and the ids of replies to a sequence not before their own; the
 * messages got first, first + 1, … in list order.
 */
function insertProject(tx: SQL, project: string, list: GroupItem[]) {
  const v = list.map((p) =>
    messageToValues(
      sequenced(p.checked, 0, p.createdAt),
      p.checked.contentBytes,
      p.checked.replySeq,
    ),
  );
  const col = (i: number) => v.map((row) => row[i]);
  return tx`
    WITH alloc AS (
      UPDATE mesh_projects SET next_sequence = next_sequence + ${list.length} WHERE name = ${project}
      RETURNING next_sequence - ${list.length} AS first
    ), inserted AS (
    INSERT INTO mesh_messages (project, sequence, msg_id, sender_name, sender_presence_id, target_kind, target_name,
      target_presence_id, encoding, data, uncompressed_bytes, attachments, content_bytes, created_at, reply_to_sequence,
      sender_principal)
    SELECT ${project}, alloc.first + x.ord - 1, x.msg_id, x.sender_name, x.sender_presence_id, x.target_kind, x.target_name,
      x.target_presence_id, x.encoding, x.data, x.uncompressed_bytes, x.attachments, x.content_bytes, x.created_at, x.reply_to_sequence,
      x.sender_principal
    FROM alloc, unnest(${col(2)}::text[], ${col(3)}::text[], ${col(4)}::text[], ${col(5)}::text[], ${col(6)}::text[],
      ${col(7)}::text[], ${col(8)}::text[], ${col(9)}::text[], ${col(10)}::int[], ${col(11)}::text[], ${col(12)}::int[],
      ${col(13)}::bigint[], ${col(14)}::bigint[], ${col(15)}::text[])
      WITH ORDINALITY AS x(msg_id, sender_name, sender_presence_id, target_kind, target_name, target_presence_id, encoding,
        data, uncompressed_bytes, attachments, content_bytes, created_at, reply_to_sequence, sender_principal, ord)
    RETURNING msg_id, sequence, reply_to_sequence
    )
    SELECT (SELECT first FROM alloc) AS first,
      array(SELECT msg_id FROM inserted WHERE reply_to_sequence >= sequence) AS bad_replies`;
}
