/**
 * @module lib/mesh/payload — the text and attachment codec: identity / base64 / gzip+base64 forms,
 * canonical base64, a gunzip bomb guard and the shared decoded-content budget.
 */

import type * as Zlib from 'node:zlib';
import { fail, ok, type Result } from './errors.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { attachmentNameProblem } from './names.ts';

// node:zlib takes tens of milliseconds of CPU to load, at every start; only a payload large
// enough to compress, or one sent compressed, needs it.
let zlib: typeof Zlib | undefined;
const z = (): typeof Zlib => (zlib ??= require('node:zlib') as typeof Zlib);

export interface TextPayload {
  encoding: 'identity' | 'gzip+base64';
  data: string;
  uncompressedBytes: number;
}

export interface AttachmentPayload {
  encoding: 'base64' | 'gzip+base64';
  data: string;
  uncompressedBytes: number;
}

export interface Attachment {
  name: string;
  payload: AttachmentPayload;
}

export type ContentCode = 'payload_too_large' | 'message_rejected';
type CodecLimits = Pick<
  MeshLimits,
  | 'maxContentBytes'
  | 'textPlainLimit'
  | 'attachmentGzipMin'
  | 'maxAttachments'
  | 'maxAttachmentNameBytes'
>;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Encodes message text: identity under the plain limit, gzip+base64 above it. */
export function encodeText(text: string, limits: CodecLimits = MESH_LIMITS): TextPayload {
  const bytes = utf8.encode(text);
  if (bytes.length < limits.textPlainLimit)
    return { encoding: 'identity', data: text, uncompressedBytes: bytes.length };
  return {
    encoding: 'gzip+base64',
    data: Buffer.from(z().gzipSync(bytes)).toString('base64'),
    uncompressedBytes: bytes.length,
  };
}

/** Encodes attachment bytes: base64, or gzip+base64 when the input is large enough and gzip shrinks it. */
export function encodeAttachment(
  name: string,
  bytes: Uint8Array,
  limits: CodecLimits = MESH_LIMITS,
): Attachment {
  if (bytes.length >= limits.attachmentGzipMin) {
    const gz = z().gzipSync(bytes);
    if (gz.length < bytes.length) {
      return {
        name,
        payload: {
          encoding: 'gzip+base64',
          data: Buffer.from(gz).toString('base64'),
          uncompressedBytes: bytes.length,
        },
      };
    }
  }
  return {
    name,
    payload: {
      encoding: 'base64',
      data: Buffer.from(bytes).toString('base64'),
      uncompressedBytes: bytes.length,
    },
  };
}

/** Decodes base64 that must re-encode to the same string (one canonical form per byte string). */
function decodeCanonicalBase64(data: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(data, 'base64');
  return bytes.toString('base64') === data ? bytes : undefined;
}

/** Gunzips at most `cap` bytes; undefined when the data is not gzip or inflates past the cap (bomb guard). */
function gunzipCapped(gz: Uint8Array, cap: number): Uint8Array | undefined {
  try {
    return z().gunzipSync(gz, { maxOutputLength: Math.max(1, cap) });
  } catch {
    return undefined;
  }
}

/** Decodes a text or attachment payload within `budget` decoded bytes. */
function decodePayload(
  p: unknown,
  kinds: readonly string[],
  budget: number,
  what: string,
): Result<Uint8Array, ContentCode> {
  if (!p || typeof p !== 'object')
    return fail('message_rejected', `${what} payload must be an object`);
  const { encoding, data, uncompressedBytes: size } = p as Record<string, unknown>;
  if (typeof encoding !== 'string' || !kinds.includes(encoding))
    return fail('message_rejected', `${what} encoding must be one of ${kinds.join(', ')}`);
  if (typeof data !== 'string') return fail('message_rejected', `${what} data must be a string`);
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    return fail('message_rejected', `${what} uncompressedBytes must be a non-negative integer`);
  if (size > budget) return fail('payload_too_large', `${what} exceeds the content budget`);
  let bytes: Uint8Array | undefined;
  if (encoding === 'identity') bytes = utf8.encode(data);
  else {
    const raw = decodeCanonicalBase64(data);
    if (!raw) return fail('message_rejected', `${what} data is not canonical base64`);
    if (encoding === 'base64') bytes = raw;
    else {
      // Inflate one byte past the budget so a bomb stops early and is told apart from an exact fit.
      bytes = gunzipCapped(raw, budget + 1);
      if (!bytes)
        return fail(
          'payload_too_large',
          `${what} is not valid gzip or inflates past the content budget`,
        );
    }
  }
  if (bytes.length > budget) return fail('payload_too_large', `${what} exceeds the content budget`);
  if (bytes.length !== size)
    return fail(
      'message_rejected',
      `${what} uncompressedBytes is ${size} but the data decodes to ${bytes.length}`,
    );
  return ok(bytes);
}

/**
 * Checks a message's text: its encoding, size and canonical form, not empty; returns its decoded
 * size. Identity text is counted without being copied: a string the frame's JSON gave encodes to
 * valid UTF-8 whatever it holds (a lone surrogate becomes U+FFFD, 3 bytes, as `TextEncoder` makes it).
 */
function checkText(payload: unknown, limits: CodecLimits): Result<number, ContentCode> {
  const p = payload as Partial<TextPayload> | null;
  if (p && typeof p === 'object' && p.encoding === 'identity' && typeof p.data === 'string') {
    const size = p.uncompressedBytes;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      return fail('message_rejected', 'text uncompressedBytes must be a non-negative integer');
    if (size > limits.maxContentBytes)
      return fail('payload_too_large', 'text exceeds the content budget');
    const bytes = Buffer.byteLength(p.data, 'utf8');
    if (bytes > limits.maxContentBytes)
      return fail('payload_too_large', 'text exceeds the content budget');
    if (bytes !== size)
      return fail(
        'message_rejected',
        `text uncompressedBytes is ${size} but the data decodes to ${bytes}`,
      );
    // One canonical form per text keeps idempotency comparisons exact.
    if (bytes >= limits.textPlainLimit)
      return fail(
        'message_rejected',
        `text of ${limits.textPlainLimit} bytes or more must be gzip+base64`,
      );
    if (p.data.trim() === '') return fail('message_rejected', 'text is empty');
    return ok(bytes);
  }
  const text = decodePayload(payload, ['identity', 'gzip+base64'], limits.maxContentBytes, 'text');
  if (!text.ok) return text;
  if (text.result.length < limits.textPlainLimit)
    return fail('message_rejected', `text under ${limits.textPlainLimit} bytes must be identity`);
  let decoded: string;
  try {
    decoded = strictUtf8.decode(text.result);
  } catch {
    return fail('message_rejected', 'text is not valid UTF-8');
  }
  if (decoded.trim() === '') return fail('message_rejected', 'text is empty');
  return ok(text.result.length);
}

/** Validates text plus attachments against every content rule; returns the decoded content size. */
export function validateContent(
  payload: unknown,
  attachments: unknown,
  limits: CodecLimits = MESH_LIMITS,
): Result<number, ContentCode> {
  if (attachments !== undefined && !Array.isArray(attachments))
    return fail('message_rejected', 'attachments must be an array');
  const list = (attachments ?? []) as unknown[];
  if (list.length > limits.maxAttachments)
    return fail('message_rejected', `at most ${limits.maxAttachments} attachments`);
  const text = checkText(payload, limits);
  if (!text.ok) return text;
  let used = text.result;
  if (list.length === 0) return ok(used);
  const names = new Set<string>();
  for (const [i, a] of list.entries()) {
    if (!a || typeof a !== 'object')
      return fail('message_rejected', `attachment ${i} must be an object`);
    const { name, payload: ap } = a as Record<string, unknown>;
    const problem = attachmentNameProblem(name, limits.maxAttachmentNameBytes);
    if (problem) return fail('message_rejected', problem);
    if (names.has(name as string))
      return fail('message_rejected', `duplicate attachment name ${JSON.stringify(name)}`);
    names.add(name as string);
    const r = decodePayload(
      ap,
      ['base64', 'gzip+base64'],
      limits.maxContentBytes - used,
      `attachment ${JSON.stringify(name)}`,
    );
    if (!r.ok) return r;
    used += r.result.length;
  }
  return ok(used);
}

/** Decodes text the hub has already validated. */
export function decodeText(p: TextPayload): string {
  if (p.encoding === 'identity') return p.data;
  return new TextDecoder().decode(
    gunzipCapped(Buffer.from(p.data, 'base64'), p.uncompressedBytes + 1) ?? new Uint8Array(),
  );
}

/** Decodes attachment bytes; undefined when they do not match their declared size. */
export function decodeAttachmentBytes(p: AttachmentPayload): Uint8Array | undefined {
  const r = decodePayload(p, ['base64', 'gzip+base64'], p.uncompressedBytes, 'attachment');
  return r.ok ? r.result : undefined;
}
