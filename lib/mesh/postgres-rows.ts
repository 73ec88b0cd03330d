/**
 * @module lib/mesh/postgres-rows — a message row as Bun.sql returns it (int8 columns arrive as
 * strings) turned into the row shape both stores share (lib/mesh/rows.ts).
 */

import type { MessageRow } from './rows.ts';

export function toRow(r: Record<string, unknown>): MessageRow {
  return {
    project: r.project as string,
    sequence: Number(r.sequence),
    msg_id: r.msg_id as string,
    sender_name: r.sender_name as string,
    sender_presence_id: r.sender_presence_id as string,
    target_kind: r.target_kind as string,
    target_name: (r.target_name as string | null) ?? null,
    target_presence_id: (r.target_presence_id as string | null) ?? null,
    encoding: r.encoding as string,
    data: r.data as string,
    uncompressed_bytes: Number(r.uncompressed_bytes),
    attachments: r.attachments as string,
    content_bytes: Number(r.content_bytes),
    created_at: Number(r.created_at),
    reply_to_sequence:
      r.reply_to_sequence === null || r.reply_to_sequence === undefined
        ? null
        : Number(r.reply_to_sequence),
    sender_principal: (r.sender_principal as string | null | undefined) ?? null,
  };
}
