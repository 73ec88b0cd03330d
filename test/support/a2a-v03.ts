/**
 * Test support for A2A v0.3 answers: the project's schema of them (fixtures/a2a-v0.3-answers.schema.json)
 * compiled once, and the official @a2a-js/sdk server with its v0.3 compatibility layer on port 0,
 * running an agent that answers in every shape v0.3 has (task with each part kind, direct message,
 * input-required with a question, a task that stays working until canceled).
 */

import type { Server } from 'node:http';
import { join } from 'node:path';
import Ajv from 'ajv';
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { FIXTURES } from './node.ts';

const schema = await Bun.file(join(FIXTURES, 'a2a-v0.3-answers.schema.json')).json();
const ajv = new Ajv({ allErrors: true, strictTypes: false });
ajv.addSchema(schema, 'a2a03');

/** The schema's problems with `value` as definition `definition`; empty when it is valid. */
export function valid03(definition: string, value: unknown): string[] {
  const check = ajv.getSchema(`a2a03#/definitions/${definition}`);
  if (!check) throw new Error(`no definition ${definition} in the v0.3 answers schema`);
  return check(value)
    ? []
    : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}

// The SDK's in-memory model (ts-proto style): numeric enums, `$case` part contents.
const STATE = { submitted: 1, working: 2, completed: 3, canceled: 5, inputRequired: 6 } as const;
const ROLE_AGENT = 2;
const now = () => new Date().toISOString();
const textPart = (value: string) => ({
  content: { $case: 'text' as const, value },
  filename: '',
  mediaType: 'text/plain',
  metadata: undefined,
});
type SdkMessage = Parameters<typeof AgentEvent.message>[0];
const agentMessage = (contextId: string, taskId: string, text: string): SdkMessage => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: ROLE_AGENT,
  parts: [textPart(text)],
  extensions: [],
  referenceTaskIds: [],
  metadata: undefined,
});

/** By the first text of the user's message: `reply` answers a message, `ask` asks back, `stay` keeps working, anything else completes with one artifact of every part kind. */
const executor = {
  async execute(ctx: any, bus: any) {
    const { taskId, contextId, userMessage } = ctx;
    const said = userMessage.parts[0]?.content?.value ?? '';
    const status = (state: number, message?: SdkMessage) => ({ state, timestamp: now(), message });
    if (said === 'reply') {
      bus.publish(AgentEvent.message(agentMessage(contextId, '', 'a direct reply')));
      bus.finished();
      return;
    }
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(STATE.submitted),
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(STATE.working),
        metadata: undefined,
      }),
    );
    if (said === 'stay') return;
    if (said === 'ask') {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(STATE.inputRequired, agentMessage(contextId, taskId, 'which one?')),
          metadata: undefined,
        }),
      );
      bus.finished();
      return;
    }
    const parts = [
      textPart('echo'),
      {
        content: { $case: 'raw' as const, value: Buffer.from('hello') },
        filename: 'out.txt',
        mediaType: 'text/plain',
        metadata: undefined,
      },
      {
        content: { $case: 'url' as const, value: 'https://example.test/a.pdf' },
        filename: 'a.pdf',
        mediaType: 'application/pdf',
        metadata: undefined,
      },
      {
        content: { $case: 'data' as const, value: { k: 1 } },
        filename: '',
        mediaType: 'application/json',
        metadata: undefined,
      },
    ];
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'a1',
          name: 'echo',
          description: '',
          parts,
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(STATE.completed),
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask(taskId: string, bus: any) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: STATE.canceled, timestamp: now(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
};

export interface SdkServer {
  url: string;
  close(): Promise<void>;
}

/** The official SDK server, JSON-RPC at `/a2a` for protocol 1.0 and 0.3, push configs on. */
export async function startSdkV03Server(): Promise<SdkServer> {
  const interfaceUrl = 'http://127.0.0.1/a2a';
  const card = {
    name: 'sdk-v03',
    description: 'The official SDK speaking v0.3',
    version: '1.0.0',
    supportedInterfaces: [
      { url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ],
    capabilities: { streaming: true, pushNotifications: true, extensions: [] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'echo',
        description: 'echo',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card as any, new InMemoryTaskStore(), executor as any);
  const app = express();
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } } as any),
  );
  app.use(
    '/a2a',
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    } as any),
  );
  const server: Server = await new Promise((ok) => {
    const s = app.listen(0, '127.0.0.1', () => ok(s));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}
