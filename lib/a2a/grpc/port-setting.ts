/**
 * @module lib/a2a/grpc/port-setting — reads the gRPC binding's port setting (`--grpc-port`,
 * `GRPC_PORT`): a port number (0 = any free port), `off` for no gRPC binding, or nothing for the
 * default (the node's port + 1000).
 */

export type GrpcPortSetting =
  | { ok: true; value: number | false | undefined }
  | { ok: false; message: string };

export function parseGrpcPort(text: string | undefined): GrpcPortSetting {
  const raw = (text ?? '').trim();
  if (raw === '') return { ok: true, value: undefined };
  if (raw === 'off' || raw === 'false') return { ok: true, value: false };
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 && n <= 65535 && /^\d+$/.test(raw)
    ? { ok: true, value: n }
    : {
        ok: false,
        message: `--grpc-port / GRPC_PORT must be a port number or off, got ${raw.slice(0, 32)}`,
      };
}

/** The node options a setting turns into. */
export function grpcOptions(value: number | false | undefined): {
  grpc?: false;
  grpcPort?: number;
} {
  return value === false ? { grpc: false } : value === undefined ? {} : { grpcPort: value };
}
