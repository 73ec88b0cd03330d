/**
 * The project's schema of A2A v0.3 answers (fixtures/a2a-v0.3-answers.schema.json) is neither too
 * loose nor too strict: every object the official @a2a-js/sdk server answers with in v0.3 (card,
 * tasks with each part kind, a direct message, an input-required question, a canceled task, stream
 * events, push configs, errors) validates, and broken variants of those objects are rejected.
 * Our own node's v0.3 answers are validated against the same schema in a2a-jsonrpc.test.ts.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startSdkV03Server, valid03, type SdkServer } from './support/a2a-v03.ts';
import { collect, msgV03 } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let sdk: SdkServer;
/** Real answers of the SDK, by name, each with the definition it answers as. */
const answers: Record<string, [definition: string, value: any]> = {};

beforeAll(async () => {
  sdk = await startSdkV03Server();
  let id = 1;
  const rpc = async (method: string, params: unknown) =>
    (
      await fetch(`${sdk.url}/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
      })
    ).json();
  answers.card = [
    'AgentCard',
    await (await fetch(`${sdk.url}/.well-known/agent-card.json`)).json(),
  ];
  const sent = await rpc('message/send', { message: msgV03('go') });
  answers.send = ['SendMessageSuccessResponse', sent];
  answers.reply = [
    'SendMessageSuccessResponse',
    await rpc('message/send', { message: msgV03('reply') }),
  ];
  const asked = await rpc('message/send', { message: msgV03('ask') });
  answers.ask = ['SendMessageSuccessResponse', asked];
  answers.get = [
    'GetTaskSuccessResponse',
    await rpc('tasks/get', { id: sent.result.id, historyLength: 1 }),
  ];
  const open = await rpc('message/send', {
    message: msgV03('stay'),
    configuration: { blocking: false },
  });
  answers.cancel = ['CancelTaskSuccessResponse', await rpc('tasks/cancel', { id: open.result.id })];
  answers.notCancelable = [
    'JSONRPCErrorResponse',
    await rpc('tasks/cancel', { id: sent.result.id }),
  ];
  answers.notFound = ['JSONRPCErrorResponse', await rpc('tasks/get', { id: 'no-such-task' })];
  answers.noMethod = ['JSONRPCErrorResponse', await rpc('tasks/nothing', {})];
  answers.parseError = [
    'JSONRPCErrorResponse',
    await (
      await fetch(`${sdk.url}/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{oops',
      })
    ).json(),
  ];
  const cfg = {
    url: 'http://127.0.0.1:9/hook',
    token: 'tok',
    authentication: { schemes: ['Bearer'], credentials: 'secret' },
  };
  const set = await rpc('tasks/pushNotificationConfig/set', {
    taskId: asked.result.id,
    pushNotificationConfig: cfg,
  });
  answers.pushSet = ['SetTaskPushNotificationConfigSuccessResponse', set];
  const ref = {
    id: asked.result.id,
    pushNotificationConfigId: set.result.pushNotificationConfig.id,
  };
  answers.pushGet = [
    'GetTaskPushNotificationConfigSuccessResponse',
    await rpc('tasks/pushNotificationConfig/get', ref),
  ];
  answers.pushList = [
    'ListTaskPushNotificationConfigSuccessResponse',
    await rpc('tasks/pushNotificationConfig/list', { id: asked.result.id }),
  ];
  answers.pushDelete = [
    'DeleteTaskPushNotificationConfigSuccessResponse',
    await rpc('tasks/pushNotificationConfig/delete', ref),
  ];
  const res = await fetch(`${sdk.url}/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 's1',
      method: 'message/stream',
      params: { message: msgV03('go') },
    }),
  });
  (await collect(res)).forEach(
    (frame, i) => (answers[`stream${i}`] = ['SendStreamingMessageSuccessResponse', frame]),
  );
});
afterAll(() => sdk.close());

describe('the official SDK server, v0.3', () => {
  test('answers in every shape the schema covers', () => {
    const send = answers.send![1].result;
    expect(send.kind).toBe('task');
    expect(
      send.artifacts[0].parts.map(
        (p: any) => p.kind + (p.file ? (p.file.bytes ? ':bytes' : ':uri') : ''),
      ),
    ).toEqual(['text', 'file:bytes', 'file:uri', 'data']);
    expect(answers.reply![1].result.kind).toBe('message');
    expect(answers.ask![1].result.status).toMatchObject({
      state: 'input-required',
      message: { kind: 'message', role: 'agent' },
    });
    expect(answers.cancel![1].result.status.state).toBe('canceled');
    expect(
      ['notCancelable', 'notFound', 'noMethod', 'parseError'].map((n) => answers[n]![1].error.code),
    ).toEqual([-32002, -32001, -32601, -32700]);
    expect(answers.pushList![1].result).toHaveLength(1);
    expect(
      Object.keys(answers)
        .filter((n) => n.startsWith('stream'))
        .map((n) => answers[n]![1].result.kind),
    ).toEqual(['task', 'status-update', 'artifact-update', 'status-update']);
    expect(answers.card![1].protocolVersion).toMatch(/^0\.3/);
  });

  test('every answer validates against the schema', () => {
    const problems = Object.entries(answers).map(([name, [definition, value]]) => [
      name,
      valid03(definition, value),
    ]);
    expect(problems).toEqual(Object.keys(answers).map((name) => [name, []]));
  });
});

/** A broken copy of a real answer: [what is broken, which answer, the change]. */
const BROKEN: Array<[string, string, (a: any) => void]> = [
  // a required field missing
  ['task without id', 'send', (a) => delete a.result.id],
  ['task without contextId', 'get', (a) => delete a.result.contextId],
  ['task without status', 'send', (a) => delete a.result.status],
  ['status without state', 'send', (a) => delete a.result.status.state],
  ['message without messageId', 'reply', (a) => delete a.result.messageId],
  ['message without role', 'reply', (a) => delete a.result.role],
  ['message without parts', 'reply', (a) => delete a.result.parts],
  ['text part without text', 'reply', (a) => delete a.result.parts[0].text],
  [
    'file part without bytes or uri',
    'send',
    (a) => delete a.result.artifacts[0].parts[1].file.bytes,
  ],
  ['data part without data', 'send', (a) => delete a.result.artifacts[0].parts[3].data],
  ['artifact without artifactId', 'send', (a) => delete a.result.artifacts[0].artifactId],
  ['status update without final', 'stream1', (a) => delete a.result.final],
  ['artifact update without artifact', 'stream2', (a) => delete a.result.artifact],
  ['push config without url', 'pushGet', (a) => delete a.result.pushNotificationConfig.url],
  ['card without url', 'card', (a) => delete a.url],
  ['card without skills', 'card', (a) => delete a.skills],
  ['skill without tags', 'card', (a) => delete a.skills[0].tags],
  ['response without result', 'get', (a) => delete a.result],
  ['response without id', 'get', (a) => delete a.id],
  ['error without code', 'notFound', (a) => delete a.error.code],
  ['error without message', 'notFound', (a) => delete a.error.message],
  // a wrong kind
  ['task of kind "tasks"', 'send', (a) => (a.result.kind = 'tasks')],
  ['task with no kind (the v1.0 form)', 'get', (a) => delete a.result.kind],
  ['message of kind "task"', 'reply', (a) => (a.result.kind = 'task')],
  ['part of kind "txt"', 'reply', (a) => (a.result.parts[0].kind = 'txt')],
  ['file part of kind "data"', 'send', (a) => (a.result.artifacts[0].parts[1].kind = 'data')],
  ['status update of kind "status"', 'stream1', (a) => (a.result.kind = 'status')],
  ['artifact update of kind "artifact"', 'stream2', (a) => (a.result.kind = 'artifact')],
  // a state or role outside the enum
  ['state "done"', 'send', (a) => (a.result.status.state = 'done')],
  ['state in the v1.0 form', 'get', (a) => (a.result.status.state = 'TASK_STATE_COMPLETED')],
  ['state "Completed"', 'stream3', (a) => (a.result.status.state = 'Completed')],
  ['role in the v1.0 form', 'reply', (a) => (a.result.role = 'ROLE_AGENT')],
  // a wrong type
  ['numeric task id', 'send', (a) => (a.result.id = 7)],
  ['parts as an object', 'reply', (a) => (a.result.parts = { kind: 'text', text: 'x' })],
  ['text as a number', 'reply', (a) => (a.result.parts[0].text = 42)],
  ['data as a string', 'send', (a) => (a.result.artifacts[0].parts[3].data = 'k=1')],
  [
    'bytes that are not base64',
    'send',
    (a) => (a.result.artifacts[0].parts[1].file.bytes = 'not base64!'),
  ],
  [
    'file with both bytes and uri',
    'send',
    (a) => (a.result.artifacts[0].parts[1].file.uri = 'https://example.test/b'),
  ],
  ['final as a string', 'stream1', (a) => (a.result.final = 'false')],
  ['timestamp as a number', 'stream3', (a) => (a.result.status.timestamp = Date.now())],
  ['timestamp that is not ISO 8601', 'stream3', (a) => (a.result.status.timestamp = 'yesterday')],
  ['metadata as a string', 'cancel', (a) => (a.result.metadata = 'none')],
  ['history as an object', 'get', (a) => (a.result.history = a.result.history[0])],
  ['jsonrpc "1.0"', 'get', (a) => (a.jsonrpc = '1.0')],
  ['id as an object', 'get', (a) => (a.id = { n: 1 })],
  ['error code as a string', 'notFound', (a) => (a.error.code = '-32001')],
  ['error code outside the reserved range', 'notFound', (a) => (a.error.code = 404)],
  ['error and result together', 'notFound', (a) => (a.result = null)],
  ['result and error together', 'pushDelete', (a) => (a.error = { code: -32603, message: 'x' })],
  ['delete answering a config', 'pushDelete', (a) => (a.result = answers.pushGet![1].result)],
  ['list answering one config, not a list', 'pushList', (a) => (a.result = a.result[0])],
  [
    'push schemes as a string',
    'pushSet',
    (a) => (a.result.pushNotificationConfig.authentication.schemes = 'Bearer'),
  ],
  ['card protocolVersion "1.0"', 'card', (a) => (a.protocolVersion = '1.0')],
  ['card streaming as a string', 'card', (a) => (a.capabilities.streaming = 'yes')],
];

describe('broken variants of those answers', () => {
  test.each(BROKEN)('%s is rejected', (_what, name, breakIt) => {
    const [definition, value] = answers[name]!;
    const copy = structuredClone(value);
    breakIt(copy);
    expect(valid03(definition, copy)).not.toEqual([]);
  });
});
