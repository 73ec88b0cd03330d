/**
 * @module hub/cli/start-options — the hub's start options that the settings give only as text or
 * parts: the console's public origins, the mesh's bounds, docs/limits.md's bounds, the gRPC port,
 * the OpenTelemetry collector and the planning model. A value the hub cannot use ends the process
 * with the reason and exit code 2, before the hub opens anything.
 */

import type { Settings } from '../../lib/config.ts';
import { parseGrpcPort } from '../../lib/a2a/grpc/port-setting.ts';
import { limitsFromEnv } from '../../lib/limits.ts';
import { otlpConfigFromEnv } from '../../lib/fleet/otlp.ts';

function exitWith(message: string): never {
  console.error(`hub: ${message}`);
  process.exit(2);
}

/** Reads the options of a hub named `name`, or exits with the first reason it cannot. */
export function hubStartOptionsOrExit(settings: Settings, name: string) {
  // Where browsers reach the console besides loopback (origins such as https://hub.example.com),
  // and whether the console signs in even on loopback (docs/security.md).
  const publicOrigins = settings.hub.publicOrigins ?? [];
  for (const o of publicOrigins)
    if (!/^https?:\/\/[^/\s]+$/.test(o))
      exitWith(
        `HUB_PUBLIC_ORIGIN must list origins such as https://hub.example.com (no path), got ${o}`,
      );
  const { heartbeatMs, heartbeatMisses, recoveryMaxMessages, socketBufferBytes } = settings.hub;
  const meshLimits = {
    ...(heartbeatMs ? { heartbeatMs } : {}),
    ...(heartbeatMisses ? { heartbeatMisses } : {}),
    ...(recoveryMaxMessages ? { recoveryMaxMessages } : {}),
    ...(socketBufferBytes ? { maxSocketBufferedBytes: socketBufferBytes } : {}),
  };
  // The bounds of docs/limits.md, read from the environment.
  const limits = limitsFromEnv(process.env);
  if (!limits.ok) exitWith(limits.message);
  // GRPC_PORT: the hub node's gRPC binding (default port + 1000; `off` for none).
  const grpcPort = parseGrpcPort(settings.grpcPort);
  if (!grpcPort.ok) exitWith(grpcPort.message);
  // The trace goes to an OpenTelemetry collector too when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  const otlp = otlpConfigFromEnv(process.env);
  if (!otlp.ok) exitWith(otlp.message);
  // An OpenAI-compatible endpoint, when configured, plans Ask Agent questions (the key is never logged).
  const m = settings.modelFor(name);
  const model = m.baseUrl
    ? {
        baseUrl: m.baseUrl,
        model: m.model,
        pingMs: m.pingMs,
        ...(m.apiKey ? { apiKey: m.apiKey } : {}),
      }
    : undefined;
  return {
    publicOrigins,
    requireLogin: settings.hub.requireLogin ?? false,
    meshLimits,
    // The gRPC port's bounds are settings (`grpc.*`), beside the limits of the environment.
    limits: { ...limits.value, ...settings.grpc },
    grpcPort: grpcPort.value,
    otlp: otlp.value,
    model,
  };
}
