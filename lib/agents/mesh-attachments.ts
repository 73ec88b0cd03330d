/**
 * @module lib/agents/mesh-attachments — what a model may attach to a mesh message: a file inside the
 * node's data folder `DATA_DIR/<node>/` (named relative to it, or absolute inside it; symbolic
 * links resolved first, so a link cannot lead out; never its task or job records, never a dotfile) or inline base64 with a name, all within the mesh's budget of 8
 * attachments and 4 MiB of decoded text plus files.
 */

import { realpath } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { fail, ok, type Result } from '../mesh/errors.ts';
import { snapshotFile } from '../mesh/files.ts';
import { MESH_LIMITS } from '../mesh/limits.ts';
import { attachmentNameProblem } from '../mesh/names.ts';
import { encodeAttachment, type Attachment } from '../mesh/payload.ts';

/** The JSON schema of one attachment in `a2a_message`. */
export const ATTACHMENT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    path: { type: 'string', description: "A file inside this node's data folder" },
    name: { type: 'string', description: 'File name of an inline attachment' },
    base64: { type: 'string', description: 'Content of an inline attachment, base64' },
  },
  additionalProperties: false,
});

/** Folders of the data folder that hold records of other callers' work (tasks, executor jobs). */
const PRIVATE: ReadonlySet<string> = new Set(['tasks', 'jobs', 'keys']);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes canonical base64 only (it must encode back to the same string). */
function decodeBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

/** Whether `path` (already real) lies inside `root` (already real). */
const inside = (root: string, path: string) =>
  path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * Turns a model's `attachments` argument into encoded attachments, or a coded refusal
 * (`A2A_ATTACHMENT`) naming the first one that cannot go. `dataDir` absent: only inline ones.
 */
export async function modelAttachments(
  given: unknown,
  textBytes: number,
  dataDir: string | undefined,
): Promise<Result<Attachment[], 'A2A_ATTACHMENT'>> {
  if (given === undefined) return ok([]);
  if (!Array.isArray(given)) return fail('A2A_ATTACHMENT', 'attachments must be an array');
  if (given.length > MESH_LIMITS.maxAttachments)
    return fail('A2A_ATTACHMENT', `at most ${MESH_LIMITS.maxAttachments} attachments`);
  const out: Attachment[] = [];
  let budget = MESH_LIMITS.maxContentBytes - textBytes;
  for (const [i, a] of given.entries()) {
    const item = a as { path?: unknown; name?: unknown; base64?: unknown } | null;
    let one: Result<Attachment, 'A2A_ATTACHMENT'>;
    if (
      item &&
      typeof item.path === 'string' &&
      item.name === undefined &&
      item.base64 === undefined
    )
      one = await fromDataFolder(item.path, dataDir, Math.max(budget, 0));
    else if (
      item &&
      typeof item.name === 'string' &&
      typeof item.base64 === 'string' &&
      item.path === undefined
    ) {
      const problem = attachmentNameProblem(item.name);
      const bytes = problem ? undefined : decodeBase64(item.base64);
      one = problem
        ? fail('A2A_ATTACHMENT', problem)
        : !bytes
          ? fail('A2A_ATTACHMENT', `attachments[${i}].base64 is not canonical base64`)
          : bytes.length > budget
            ? fail(
                'A2A_ATTACHMENT',
                `${item.name} is over the ${MESH_LIMITS.maxContentBytes}-byte budget`,
              )
            : ok(encodeAttachment(item.name, bytes));
    } else one = fail('A2A_ATTACHMENT', `attachments[${i}] must be {path} or {name, base64}`);
    if (!one.ok) return one;
    if (out.some((o) => o.name === one.result.name))
      return fail('A2A_ATTACHMENT', `${one.result.name} is attached twice`);
    budget -= one.result.payload.uncompressedBytes;
    out.push(one.result);
  }
  return ok(out);
}

async function fromDataFolder(
  path: string,
  dataDir: string | undefined,
  budget: number,
): Promise<Result<Attachment, 'A2A_ATTACHMENT'>> {
  if (!dataDir) return fail('A2A_ATTACHMENT', 'this node attaches no files, only inline content');
  let root: string;
  let real: string;
  try {
    root = await realpath(dataDir);
    real = await realpath(isAbsolute(path) ? path : resolve(dataDir, path));
  } catch {
    return fail('A2A_ATTACHMENT', `no such file in the data folder: ${path}`);
  }
  // The real path decides, so `../x` and a link pointing out are refused alike.
  if (!inside(root, real)) return fail('A2A_ATTACHMENT', `${path} is outside the data folder`);
  // Records of other callers' work and the process's own files never leave, whoever asks.
  const rel = real.slice(root.length + 1).split(sep);
  if (PRIVATE.has(rel[0]!) || rel.some((p) => p.startsWith('.')))
    return fail('A2A_ATTACHMENT', `${path} is not a file the node shares`);
  return snapshotFile(real, budget);
}
