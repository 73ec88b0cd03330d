/**
 * @module lib/a2a/operations-v03 — the A2A 0.3 operations by their JSON-RPC method names, over the
 * same engine steps as the 1.0 ones (lib/a2a/operations.ts); params are read and results written
 * in the 0.3 wire form.
 */

import type { SendResult, TaskEngine } from './engine/engine.ts';
import { a2aError, isA2AError } from './errors.ts';
import { operationSteps, type Operation } from './operations.ts';
import type { PushConfig } from './types.ts';
import * as v03 from './wire/v03.ts';

export const V03_METHODS = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
] as const;
export type V03Method = (typeof V03_METHODS)[number];

/** The v0.3 operations; results are in the v0.3 wire form. */
export function v03Operations(
  engine: TaskEngine,
  streaming: boolean,
): Record<V03Method, Operation> {
  const { send, stream, subscribe, value } = operationSteps(engine, streaming);
  const sendResult = (r: SendResult) =>
    'task' in r ? v03.taskToV03(r.task) : v03.messageToV03(r.message);
  return {
    'message/send': (p, _n, caller) => send(v03.parseSendParamsV03(p), '0.3', caller, sendResult),
    'message/stream': (p, n, caller) =>
      stream(v03.parseSendParamsV03(p), '0.3', n, caller, v03.eventToV03),
    'tasks/get': async (p, _n, caller) => {
      const q = v03.parseTaskQueryV03(p);
      return isA2AError(q)
        ? q
        : value(await engine.getTask(q.id, q.historyLength, caller), v03.taskToV03);
    },
    'tasks/cancel': async (p, _n, caller) => {
      const q = v03.parseTaskQueryV03(p);
      return isA2AError(q) ? q : value(await engine.cancel(q.id, caller), v03.taskToV03);
    },
    'tasks/resubscribe': (p, _n, caller, ctx) =>
      subscribe(v03.parseTaskQueryV03(p), caller, v03.eventToV03, p, ctx),
    'tasks/pushNotificationConfig/set': async (p, _n, caller) => {
      const c = v03.parseSetPushV03(p);
      return isA2AError(c) ? c : value(await engine.setPush(c, '0.3', caller), v03.pushConfigToV03);
    },
    'tasks/pushNotificationConfig/get': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, false);
      return isA2AError(r)
        ? r
        : value(await engine.getPush(r.taskId, r.id, caller), v03.pushConfigToV03);
    },
    'tasks/pushNotificationConfig/list': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, false);
      return isA2AError(r)
        ? r
        : value(await engine.listPush(r.taskId, caller), (cs: PushConfig[]) =>
            cs.map(v03.pushConfigToV03),
          );
    },
    'tasks/pushNotificationConfig/delete': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, true);
      return isA2AError(r)
        ? r
        : value(await engine.deletePush(r.taskId, r.id!, caller), () => null);
    },
    'agent/getAuthenticatedExtendedCard': () =>
      a2aError('UNSUPPORTED_OPERATION', 'This agent has no extended agent card'),
  };
}
