/**
 * @module lib/mesh/files — attachments and the local disk: the sender snapshots absolute regular files,
 * the receiver writes attachments under a temp directory with mode 0600 and exclusive create.
 */

import { mkdir, mkdtemp, readFile, stat } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.ts';
import { fail, ok, type Result } from './errors.ts';
import { MESH_LIMITS } from './limits.ts';
import { attachmentNameProblem } from './names.ts';
import { decodeAttachmentBytes, encodeAttachment, type Attachment } from './payload.ts';
import type { MeshMessage } from './wire.ts';

export interface SavedAttachment {
  name: string;
  path: string;
  bytes: number;
}

/** Reads an absolute path into an encoded attachment; the file must be regular and not change size while read. */
export async function snapshotFile(
  path: string,
  maxBytes = MESH_LIMITS.maxContentBytes,
): Promise<Result<Attachment, 'A2A_ATTACHMENT'>> {
  if (!isAbsolute(path)) return fail('A2A_ATTACHMENT', `attachment path must be absolute: ${path}`);
  const name = basename(path);
  const problem = attachmentNameProblem(name);
  if (problem) return fail('A2A_ATTACHMENT', problem);
  try {
    const before = await stat(path);
    if (!before.isFile()) return fail('A2A_ATTACHMENT', `not a regular file: ${path}`);
    if (before.size > maxBytes)
      return fail('A2A_ATTACHMENT', `${name} is over the ${maxBytes}-byte content budget`);
    const bytes = await readFile(path);
    const after = await stat(path);
    if (bytes.length !== before.size || after.size !== before.size)
      return fail('A2A_ATTACHMENT', `${name} changed size while it was read`);
    return ok(encodeAttachment(name, bytes));
  } catch (e) {
    return fail(
      'A2A_ATTACHMENT',
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/**
 * Writes a message's attachments to `<baseDir>/<project>/<sequence>/attach-XXXXXX/<name>`.
 * Names are checked again here: the receiver never trusts the hub with its file system.
 */
export async function materialize(
  baseDir: string,
  m: MeshMessage,
): Promise<Result<SavedAttachment[], 'A2A_ATTACHMENT'>> {
  if (m.attachments.length === 0) return ok([]);
  const out: SavedAttachment[] = [];
  try {
    const parent = join(baseDir, m.project, String(m.sequence));
    await mkdir(parent, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(parent, 'attach-'));
    for (const a of m.attachments) {
      const problem = attachmentNameProblem(a.name);
      if (problem) return fail('A2A_ATTACHMENT', problem);
      const bytes = decodeAttachmentBytes(a.payload);
      if (!bytes)
        return fail('A2A_ATTACHMENT', `attachment ${a.name} does not decode to its declared size`);
      const path = join(dir, a.name);
      // A fresh folder nobody knows of yet: one exclusive create, no temporary file.
      if (!(await writeFileAtomic(path, bytes, { ifAbsent: true, direct: true })))
        return fail('A2A_ATTACHMENT', `attachment ${a.name} is named twice`);
      out.push({ name: a.name, path, bytes: bytes.length });
    }
    return ok(out);
  } catch (e) {
    return fail(
      'A2A_ATTACHMENT',
      `cannot write attachments of ${m.messageRef}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}
