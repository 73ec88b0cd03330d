/** Realtime protocol against a real hub on port 0: claims, presence frames, direct and broadcast sends, delivery outcomes. */

import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  createProject,
  heldCommits,
  join,
  msg,
  RawClient,
  startHub,
  UUID,
  type TestHub,
} from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let hub: TestHub;
afterEach(async () => {
  await hub?.stop();
});

describe('claim and presence', () => {
  test('claimed lists earlier peers; others see joined and left; a reused name is a new presence', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    const stream = {
      epoch: expect.any(String),
      sequence: 0,
      heartbeatMs: 10_000,
      heartbeatMisses: 2,
      resumed: false,
      resumeSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    };
    expect(a.claimed).toEqual({
      type: 'claimed',
      protocolVersion: 3,
      project: 'demo',
      self: { name: 'alice', presenceId: UUID },
      peers: [],
      ...stream,
    });
    const b = await join(hub, 'demo', 'bob');
    expect(b.claimed).toEqual({
      type: 'claimed',
      protocolVersion: 3,
      project: 'demo',
      self: { name: 'bob', presenceId: UUID },
      peers: [a.self],
      ...stream,
    });
    expect(b.claimed.resumeSecret).not.toBe(a.claimed.resumeSecret);
    await b.c.close();
    const b2 = await join(hub, 'demo', 'bob');
    expect(b2.self.presenceId).not.toBe(b.self.presenceId);
    expect(await a.c.take(3)).toEqual([
      { type: 'presence_joined', peer: b.self },
      { type: 'presence_left', peer: b.self, reason: 'connection_closed' },
      { type: 'presence_joined', peer: b2.self },
    ]);
  });

  test('name_in_use, unknown_project and protocol_mismatch answer an error and close 1008 with the code', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    await join(hub, 'demo', 'alice');
    const cases: [Record<string, unknown>, string][] = [
      [{ project: 'demo', name: 'alice' }, 'name_in_use'],
      [{ project: 'nope', name: 'alice' }, 'unknown_project'],
      [{ project: 'demo', name: 'carol', protocolVersion: 4 }, 'protocol_mismatch'],
      [{ project: 'demo', name: 'a/b' }, 'claim_rejected'],
      [{ project: 'demo', name: 'bad\u0007name' }, 'claim_rejected'],
      [{ project: '../etc', name: 'carol' }, 'claim_rejected'],
    ];
    for (const [hello, code] of cases) {
      const c = new RawClient(hub);
      await c.send({ type: 'hello', protocolVersion: 3, ...hello });
      expect({ frames: await c.take(1), close: await c.closed }).toEqual({
        frames: [{ type: 'error', code, message: expect.any(String) }],
        close: { code: 1008, reason: code },
      });
    }
    expect(hub.mesh.realtime.roster.list('demo').map((p) => p.name)).toEqual(['alice']);
  });
});

describe('direct messages', () => {
  test('send -> accepted -> message -> delivered, with the stored message', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    const b = await join(hub, 'demo', 'bob');
    await a.c.next(); // presence_joined bob
    await a.c.send(msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'hello bob'));
    const stored = {
      messageId: 'm-1',
      messageRef: 'demo:1',
      project: 'demo',
      sequence: 1,
      from: a.self,
      target: { type: 'agent', name: 'bob', presenceId: b.self.presenceId },
      payload: { encoding: 'identity', data: 'hello bob', uncompressedBytes: 9 },
      attachments: [],
      createdAt: expect.any(Number),
    };
    expect(await b.c.next()).toEqual({ type: 'message', message: stored });
    await b.c.send({ type: 'delivered', messageId: 'm-1' });
    expect(await a.c.take(2)).toEqual([
      { type: 'accepted', requestId: 'r1', message: stored, recipients: ['bob'] },
      { type: 'delivery', messageId: 'm-1', to: 'bob', status: 'delivered' },
    ]);
  });

  test('an absent recipient is refused at once and nothing is stored; sending to yourself is rejected', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    await a.c.send(msg('r1', 'm-1', { type: 'agent', name: 'ghost' }, 'anyone?'));
    await a.c.send(msg('r2', 'm-2', { type: 'agent', name: 'alice' }, 'me'));
    await a.c.send(msg('r3', 'm-3', { type: 'nobody' }, 'x'));
    expect(await a.c.take(3)).toEqual([
      {
        type: 'error',
        code: 'recipient_not_present',
        message: 'ghost is not present in project demo',
        requestId: 'r1',
      },
      {
        type: 'error',
        code: 'message_rejected',
        message: 'cannot send to yourself',
        requestId: 'r2',
      },
      { type: 'error', code: 'message_rejected', message: expect.any(String), requestId: 'r3' },
    ]);
    expect(await hub.store.history({ project: 'demo', limit: 50 })).toEqual([]);
  });

  test('a recipient that closes before acknowledging gives disconnected; a failing handler gives failed', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    const b = await join(hub, 'demo', 'bob');
    const c = await join(hub, 'demo', 'carol');
    await a.c.take(2);
    await a.c.send(msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'one'));
    await a.c.send(msg('r2', 'm-2', { type: 'agent', name: 'carol' }, 'two'));
    expect((await b.c.take(2)).map((f) => f.type)).toEqual(['presence_joined', 'message']);
    await b.c.close();
    expect((await c.c.next()).type).toBe('message');
    await c.c.send({ type: 'delivery_failed', messageId: 'm-2', error: 'x'.repeat(600) });
    const frames = await a.c.take(5);
    expect(frames.map((f) => [f.type, f.requestId ?? f.to, f.status ?? f.reason ?? null])).toEqual([
      ['accepted', 'r1', null],
      ['accepted', 'r2', null],
      ['delivery', 'bob', 'disconnected'],
      ['presence_left', undefined, 'connection_closed'],
      ['delivery', 'carol', 'failed'],
    ]);
    expect(frames[4]).toEqual({
      type: 'delivery',
      messageId: 'm-2',
      to: 'carol',
      status: 'failed',
      error: 'x'.repeat(512),
    });
  });

  test('an acknowledgement for an unknown delivery is invalid_frame and the socket keeps working', async () => {
    hub = startHub();
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    const b = await join(hub, 'demo', 'bob');
    await b.c.send({ type: 'delivered', messageId: 'm-never' });
    expect(await b.c.next()).toEqual({
      type: 'error',
      code: 'invalid_frame',
      message: 'no delivery of m-never is waiting for an acknowledgement',
    });
    await b.c.send(msg('r1', 'm-1', { type: 'agent', name: 'alice' }, 'still here'));
    expect((await b.c.next()).type).toBe('accepted');
    expect((await a.c.take(2)).map((f) => f.type)).toEqual(['presence_joined', 'message']);
  });
});

describe('broadcast', () => {
  test('goes to the presence snapshot at accept time without the sender, never to later joiners', async () => {
    // Hold the group commit so a join and a leave can happen between accept and delivery.
    const commits = heldCommits();
    hub = startHub({ schedule: commits.schedule });
    await createProject(hub, 'demo');
    const a = await join(hub, 'demo', 'alice');
    const b = await join(hub, 'demo', 'bob');
    const c = await join(hub, 'demo', 'carol');
    await a.c.take(2);
    await a.c.send(msg('r1', 'm-1', { type: 'project' }, 'all hands'));
    // The append is queued once alice's frame is handled: carol leaves after that, and dave's claim
    // (which commits the open group first, so recovery can read it) comes after the snapshot too.
    await commits.next();
    await c.c.close();
    await b.c.take(2); // carol joined, carol left: the hub has seen the close
    const d = await join(hub, 'demo', 'dave');
    const accepted = await a.c.take(4);
    expect(
      accepted.map((f) => `${f.type}:${f.peer?.name ?? f.to ?? f.recipients?.join(',')}`),
    ).toEqual([
      'presence_left:carol',
      'presence_joined:dave',
      'accepted:bob,carol',
      'delivery:carol',
    ]);
    expect(accepted[3]!.status).toBe('disconnected');
    const got = await b.c.take(2);
    expect(got.map((f) => f.type)).toEqual(['presence_joined', 'message']);
    expect(got[1]!.message.target).toEqual({ type: 'project' });
    // Dave's next frame is a later direct marker, not the broadcast.
    await a.c.send(msg('r2', 'm-2', { type: 'agent', name: 'dave' }, 'marker'));
    (await commits.next())();
    expect((await d.c.next()).message?.messageId).toBe('m-2');
  });
});
