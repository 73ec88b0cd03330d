/**
 * Test support: speaking to a node's gRPC binding the way a client does, with `@grpc/grpc-js`
 * (the official SDK's own transport): raw unary and server-streaming calls of bytes given by the
 * test, and the status, message and `google.rpc.ErrorInfo` of a failed call.
 */

import * as grpc from '@grpc/grpc-js';
import { decodeMessage } from '../../lib/a2a/grpc/decode.ts';
import { A2A_SCHEMA } from '../../lib/a2a/proto/schema.ts';

export const SERVICE = '/lf.a2a.v1.A2AService';

/** The gRPC address a card lists (`host:port`), or undefined. */
export function grpcAddressOf(card: Record<string, unknown>): string | undefined {
  const list = card.supportedInterfaces as { url: string; protocolBinding: string }[];
  return list.find((i) => i.protocolBinding === 'GRPC')?.url;
}

export interface CallOutcome {
  code: number;
  details: string;
  /** ErrorInfo of a failure: its reason and domain. */
  reason?: string;
  domain?: string;
  /** BadRequest field of a failure, when it names one. */
  field?: string;
  /** Every answer message, in order (one for a unary call). */
  messages: Uint8Array[];
  /** The answer's `a2a-extensions` metadata, when it had one (unary calls). */
  extensions?: string;
}

const passthrough = (b: Buffer) => b;

function metadataOf(values: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(values)) md.set(k, v);
  return md;
}

function errorInfo(err: grpc.ServiceError | undefined): Partial<CallOutcome> {
  const raw = err?.metadata?.get('grpc-status-details-bin')[0];
  if (!(raw instanceof Buffer)) return {};
  const status = decodeMessage(A2A_SCHEMA, 'google.rpc.Status', raw);
  if (!status.ok) return {};
  const out: Partial<CallOutcome> = {};
  for (const d of (status.result.details ?? []) as { typeUrl: string; value: string }[]) {
    const bytes = Buffer.from(d.value, 'base64');
    if (d.typeUrl === 'type.googleapis.com/google.rpc.ErrorInfo') {
      const info = decodeMessage(A2A_SCHEMA, 'google.rpc.ErrorInfo', bytes);
      if (info.ok) Object.assign(out, { reason: info.result.reason, domain: info.result.domain });
    }
    if (d.typeUrl === 'type.googleapis.com/google.rpc.BadRequest') {
      const bad = decodeMessage(A2A_SCHEMA, 'google.rpc.BadRequest', bytes);
      const v = bad.ok
        ? (bad.result.fieldViolations as { field: string }[] | undefined)
        : undefined;
      if (v?.[0]) out.field = v[0].field;
    }
  }
  return out;
}

/** A client of raw bytes; close it when done. */
export function rawClient(address: string): grpc.Client {
  return new grpc.Client(address, grpc.credentials.createInsecure());
}

export function unary(
  client: grpc.Client,
  method: string,
  body: Uint8Array,
  metadata: Record<string, string> = {},
): Promise<CallOutcome> {
  return new Promise((resolve) => {
    let extensions: string | undefined;
    const call = client.makeUnaryRequest(
      `${SERVICE}/${method}`,
      passthrough,
      passthrough,
      Buffer.from(body),
      metadataOf(metadata),
      (err, res) =>
        resolve({
          code: err?.code ?? 0,
          details: err?.details ?? '',
          ...errorInfo(err ?? undefined),
          messages: res ? [new Uint8Array(res)] : [],
          ...(extensions !== undefined ? { extensions } : {}),
        }),
    );
    call.on('metadata', (md) => {
      const v = md.get('a2a-extensions')[0];
      if (typeof v === 'string') extensions = v;
    });
  });
}

/** A server-streaming call read to its end; `onMessage` sees each message as it arrives. */
export function serverStream(
  client: grpc.Client,
  method: string,
  body: Uint8Array,
  metadata: Record<string, string> = {},
  onMessage: (m: Uint8Array, call: grpc.ClientReadableStream<Buffer>) => void = () => {},
): Promise<CallOutcome> {
  return new Promise((resolve) => {
    const call = client.makeServerStreamRequest(
      `${SERVICE}/${method}`,
      passthrough,
      passthrough,
      Buffer.from(body),
      metadataOf(metadata),
    );
    const messages: Uint8Array[] = [];
    call.on('data', (m: Buffer) => {
      messages.push(new Uint8Array(m));
      onMessage(new Uint8Array(m), call);
    });
    call.on('error', (err: grpc.ServiceError) =>
      resolve({ code: err.code, details: err.details, ...errorInfo(err), messages }),
    );
    call.on('status', (s: grpc.StatusObject) => {
      if (s.code === 0) resolve({ code: 0, details: s.details, messages });
    });
  });
}
