/**
 * @module node/conformance/mcp-shelf — the resources, resource template, prompts and completions
 * the official MCP conformance suite reads from a server: a text and a binary resource, a template
 * `test://template/{id}/data`, a resource clients may subscribe to, and four prompts (plain, with
 * arguments, with an embedded resource, with an image).
 */

import type { McpPrompt, McpResource, PromptMessage } from '../../lib/mcp/protocol.ts';
import type { McpCompleter, McpPromptBook, McpShelf } from '../../lib/mcp/server-types.ts';
import { roundPrompt } from './mcp-rounds.ts';
import { PNG_BASE64 } from './mcp-schemas.ts';

const RESOURCES: McpResource[] = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients may subscribe to',
    mimeType: 'text/plain',
  },
];

const TEMPLATE = /^test:\/\/template\/([^/]{1,128})\/data$/;

export const conformanceResources: McpShelf = {
  subscribable: true,
  list: async () => RESOURCES,
  templates: async () => [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'template',
      title: 'Resource Template',
      description: 'A resource template with parameter substitution',
      mimeType: 'application/json',
    },
  ],
  read: async (uri) => {
    if (uri === 'test://static-text')
      return {
        uri,
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      };
    if (uri === 'test://static-binary') return { uri, mimeType: 'image/png', blob: PNG_BASE64 };
    if (uri === 'test://watched-resource')
      return { uri, mimeType: 'text/plain', text: 'Watched resource content' };
    const id = TEMPLATE.exec(uri)?.[1];
    if (id === undefined) return undefined;
    const text = JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` });
    return { uri, mimeType: 'application/json', text };
  },
};

const say = (text: string): PromptMessage => ({ role: 'user', content: { type: 'text', text } });

const PROMPTS: [McpPrompt, (a: Record<string, string>) => PromptMessage[] | string][] = [
  [
    {
      name: 'test_simple_prompt',
      title: 'Simple Test Prompt',
      description: 'A simple prompt without arguments',
    },
    () => [say('This is a simple prompt for testing.')],
  ],
  [
    {
      name: 'test_prompt_with_arguments',
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      arguments: [
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ],
    },
    (a) =>
      a.arg1 === undefined || a.arg2 === undefined
        ? 'arguments arg1 and arg2 are required'
        : [say(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`)],
  ],
  [
    {
      name: 'test_prompt_with_embedded_resource',
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      arguments: [
        { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
      ],
    },
    (a) =>
      a.resourceUri === undefined
        ? 'argument resourceUri is required'
        : [
            {
              role: 'user',
              content: {
                type: 'resource',
                resource: {
                  uri: a.resourceUri,
                  mimeType: 'text/plain',
                  text: 'Embedded resource content for testing.',
                },
              },
            },
            say('Please process the embedded resource above.'),
          ],
  ],
  [
    {
      name: 'test_prompt_with_image',
      title: 'Prompt With Image',
      description: 'A prompt that includes image content',
    },
    () => [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      say('Please analyze the image above.'),
    ],
  ],
];

const ROUND_PROMPT: McpPrompt = {
  name: 'test_input_required_result_prompt',
  description: 'MRTR: prompt that requires elicitation input',
};

export const conformancePrompts: McpPromptBook = {
  list: async () => [...PROMPTS.map(([p]) => p), ROUND_PROMPT],
  get: async (name, args, ctx) => {
    if (name === ROUND_PROMPT.name) return roundPrompt(ctx);
    const found = PROMPTS.find(([p]) => p.name === name);
    if (!found) return undefined;
    const messages = found[1](args);
    return typeof messages === 'string' ? messages : { messages };
  },
};

/** Completes a prompt argument from its known values (none are known: the suite checks the shape). */
export const conformanceCompletions: McpCompleter = {
  complete: async () => ({ values: [], total: 0, hasMore: false }),
};
