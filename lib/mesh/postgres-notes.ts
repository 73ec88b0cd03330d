/**
 * @module mesh/postgres-notes — the text of the two notifications hubs send at message rate on the
 * mesh channel. A commit note says "project P has `count` new messages from sequence `first`" and,
 * when they fit in one notification, carries them, so the other hubs need not read them back. A
 * delivery note carries delivery outcomes already encoded as frames for their senders' sockets.
 * Both start with a kind letter and the sending hub's id, so a hub skips its own notes without
 * parsing them. (Rarer notes, presence changes, are JSON objects.)
 *
 *   c<TAB>hub<TAB>project<TAB>count<TAB>first[<LF>message line]…   (count lines, or none)
 *   message line: messageId<TAB>sender name<TAB>sender presence id<TAB>target name (* for the
 *                 project)<TAB>target presence id (may be empty)<TAB>message JSON without sequence
 *   d<TAB>hub[<LF>sender presence id<TAB>frame JSON]…
 *
 * The routing fields lead a message line so that a hub routes it without decoding the JSON. JSON
 * never holds a raw line feed or tab, and hub ids, project names, roster names, message ids and
 * presence ids hold neither.
 */

import { lazyMessage, sequencedJson } from './message-json.ts';
import type { MeshMessage, Peer, Target } from './wire.ts';

/** Largest notification we send, in bytes (PostgreSQL refuses more than 8000). */
export const NOTE_LIMIT = 7900;

/**
 * Separates notes (and their parts) sent to the database in one text parameter, which costs less
 * to send than a text array. It is a control character, which JSON always escapes, so no note holds it.
 */
export const NOTE_SEPARATOR = '\x1e';
/** Separates the fields of one part of a commit note in that text. */
export const PART_SEPARATOR = '\x1f';

/** A commit note split so the database can put `first` in: `prefix + first + tail`. */
export interface CommitNotePart {
  prefix: string;
  /** Offset of this part's first message in the group. */
  offset: number;
  tail: string;
}

/**
 * The commit notes of one project's group, in sequence order: consecutive messages share a note
 * while it stays under the limit; a message too large for any note (or left out, `undefined`) gets
 * a note without the message (the other hubs read it from the store).
 */
export function commitNoteParts(hub: string, project: string, messages: (string | undefined)[]): CommitNotePart[] {
  const parts: CommitNotePart[] = [];
  // Room for the header: the prefix and a first sequence of up to 16 digits.
  const header = Buffer.byteLength(`c\t${hub}\t${project}\t`) + 24;
  let offset = 0;
  let lines: string[] = [];
  let size = header;
  const close = (end: number) => {
    if (end > offset) parts.push({ prefix: `c\t${hub}\t${project}\t${end - offset}\t`, offset, tail: lines.length ? `\n${lines.join('\n')}` : '' });
    offset = end;
    lines = [];
    size = header;
  };
  for (let i = 0; i < messages.length; i++) {
    const line = messages[i];
    const n = line === undefined ? NOTE_LIMIT : bytes(line) + 1;
    if (size + n > NOTE_LIMIT && lines.length > 0) close(i);
    if (header + n > NOTE_LIMIT) {
      // Alone it does not fit either: announced without its content.
      close(i + 1);
      continue;
    }
    lines.push(line!);
    size += n;
  }
  close(messages.length);
  return parts;
}

/** Whether a message's content (its encoded text and attachments) leaves room for it in a note at all. */
export const mayFitInNote = (contentLength: number): boolean => contentLength < NOTE_LIMIT;

/** A commit note's line for one message: its routing fields, then its JSON without sequence. */
export function commitLine(messageId: string, m: { from: Peer; target: Target }, unsequenced: string): string {
  const t = m.target;
  const to = t.type === 'project' ? '*\t' : `${t.name}\t${t.presenceId ?? ''}`;
  return `${messageId}\t${m.from.name}\t${m.from.presenceId}\t${to}\t${unsequenced}`;
}

/** The message of a commit note's line, given its sequence, with its whole JSON; undefined when malformed. */
export function readCommitLine(line: string, project: string, sequence: number): { message: MeshMessage; json: string } | undefined {
  const f: string[] = [];
  let at = 0;
  for (let i = 0; i < 5; i++) {
    const tab = line.indexOf('\t', at);
    if (tab < 0) return undefined;
    f.push(line.slice(at, tab));
    at = tab + 1;
  }
  const [messageId, fromName, fromPresenceId, toName, toPresenceId] = f as [string, string, string, string, string];
  const unsequenced = line.slice(at);
  if (!unsequenced.startsWith('{')) return undefined;
  const target: Target = toName === '*' ? { type: 'project' } : toPresenceId ? { type: 'agent', name: toName, presenceId: toPresenceId } : { type: 'agent', name: toName };
  return {
    message: lazyMessage({ messageId, from: { name: fromName, presenceId: fromPresenceId }, target }, unsequenced, project, sequence),
    json: sequencedJson(unsequenced, project, sequence),
  };
}

const bytes = (s: string) => Buffer.byteLength(s);

/** Delivery notes holding `items` ([sender presence id, frame JSON]), each under the limit. */
export function deliveryNotes(hub: string, items: [string, string][]): string[] {
  const notes: string[] = [];
  const head = `d\t${hub}`;
  let note = head;
  let size = head.length;
  for (const [sender, frame] of items) {
    const line = `\n${sender}\t${frame}`;
    const n = bytes(line);
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

export interface CommitNote {
  hub: string;
  project: string;
  first: number;
  count: number;
  /** The messages' JSON without sequence, `count` of them; absent when the note did not carry them. */
  messages?: string[];
}

/** Reads a commit note; undefined when it is malformed. */
export function parseCommitNote(note: string): CommitNote | undefined {
  const nl = note.indexOf('\n');
  const [kind, hub, project, count, first] = (nl < 0 ? note : note.slice(0, nl)).split('\t');
  const c = Number(count);
  const f = Number(first);
  if (kind !== 'c' || !hub || !project || !Number.isSafeInteger(c) || c < 1 || !Number.isSafeInteger(f) || f < 1) return undefined;
  if (nl < 0) return { hub, project, first: f, count: c };
  const messages = note.slice(nl + 1).split('\n');
  return messages.length === c ? { hub, project, first: f, count: c, messages } : { hub, project, first: f, count: c };
}

/** Reads a delivery note: its hub and [sender presence id, frame JSON] pairs; undefined when malformed. */
export function parseDeliveryNote(note: string): { hub: string; items: [string, string][] } | undefined {
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
