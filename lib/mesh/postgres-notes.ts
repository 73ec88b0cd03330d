/**
 * @module lib/mesh/postgres-notes — the text of the two notifications hubs send at message rate on the
 * mesh channel. A commit note says "project P is committed up to sequence S" (the other hubs read
 * the new rows they need). A delivery note carries delivery outcomes already encoded as frames for
 * their senders' sockets. Both start with a kind letter and the sending hub's id, so a hub skips its
 * own notes without parsing them. (Rarer notes, presence changes, are JSON objects.)
 *
 *   c<TAB>hub<TAB>project<TAB>sequence
 *   d<TAB>hub[<LF>sender presence id<TAB>frame JSON]…
 *
 * JSON never holds a raw line feed or tab, and hub ids, project names and presence ids hold neither.
 */

/** Largest notification we send, in bytes (PostgreSQL refuses more than 8000). */
export const NOTE_LIMIT = 7900;

/**
 * Separates notes sent to the database in one text parameter, which costs less to send than a
 * text array. It is a control character, which JSON always escapes, so no note holds it.
 */
export const NOTE_SEPARATOR = '\x1e';

/** The start of a commit note from `hub`; the database appends the project and its last sequence. */
export const commitNotePrefix = (hub: string): string => `c\t${hub}\t`;

/** Delivery notes holding `items` ([sender presence id, frame JSON]), each under the limit. */
export function deliveryNotes(hub: string, items: [string, string][]): string[] {
  const notes: string[] = [];
  const head = `d\t${hub}`;
  let note = head;
  let size = head.length;
  for (const [sender, frame] of items) {
    const line = `\n${sender}\t${frame}`;
    const n = Buffer.byteLength(line);
    if (size + n > NOTE_LIMIT && note !== head) {
      notes.push(note);
      note = head;
      size = head.length;
    }
    note += line;
    size += n;
  }
  if (note !== head) notes.push(note);
  return notes;
}

/** The hub that sent a commit or delivery note, read without parsing the rest; undefined for other notes. */
export function noteOrigin(note: string): string | undefined {
  const kind = note.charCodeAt(0);
  if ((kind !== 99 /* c */ && kind !== 100) /* d */ || note.charCodeAt(1) !== 9) return undefined;
  let end = 2;
  while (end < note.length && note.charCodeAt(end) !== 9 && note.charCodeAt(end) !== 10) end++;
  return note.slice(2, end);
}

/** Reads a commit note; undefined when it is malformed. */
export function parseCommitNote(
  note: string,
): { hub: string; project: string; sequence: number } | undefined {
  const [kind, hub, project, sequence, extra] = note.split('\t');
  const s = Number(sequence);
  if (kind !== 'c' || !hub || !project || extra !== undefined || !Number.isSafeInteger(s) || s < 0)
    return undefined;
  return { hub, project, sequence: s };
}

/** Reads a delivery note: its hub and [sender presence id, frame JSON] pairs; undefined when malformed. */
export function parseDeliveryNote(
  note: string,
): { hub: string; items: [string, string][] } | undefined {
  const lines = note.split('\n');
  const [kind, hub] = lines[0]!.split('\t');
  if (kind !== 'd' || !hub) return undefined;
  const items: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const tab = lines[i]!.indexOf('\t');
    if (tab > 0) items.push([lines[i]!.slice(0, tab), lines[i]!.slice(tab + 1)]);
  }
  return { hub, items };
}
