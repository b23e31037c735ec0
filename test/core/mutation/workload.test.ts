import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { podViewOf } from '../../../src/core/mutation/workload.js';

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'a' }] },
};

describe('podViewOf', () => {
  const kinds: [string, Record<string, unknown>, string[]][] = [
    ['Deployment', { spec: { template } }, ['spec', 'template']],
    ['StatefulSet', { spec: { template } }, ['spec', 'template']],
    ['DaemonSet', { spec: { template } }, ['spec', 'template']],
    ['ReplicaSet', { spec: { template } }, ['spec', 'template']],
    ['Job', { spec: { template } }, ['spec', 'template']],
    [
      'CronJob',
      { spec: { jobTemplate: { spec: { template } } } },
      ['spec', 'jobTemplate', 'spec', 'template'],
    ],
  ];
  for (const [kind, body, path] of kinds) {
    it(`finds the pod template of a ${kind} and writes the injected pod back`, () => {
      const object = {
        apiVersion: 'apps/v1',
        kind,
        metadata: { name: 'w', namespace: 'team' },
        ...body,
      };
      const view = podViewOf(object);
      assert.ok(typeof view !== 'string');
      assert.equal(view.pod.metadata.namespace, 'team');
      assert.deepEqual(view.pod.metadata.labels, { app: 'web' });
      const injected = structuredClone(view.pod);
      injected.spec.containers.unshift({ name: 'sidecar', image: 's' });
      injected.metadata.annotations = { a: 'b' };
      const written = view.withPod(injected);
      let at: unknown = written;
      for (const key of path) at = (at as Record<string, unknown>)[key];
      assert.deepEqual(at, {
        metadata: { labels: { app: 'web' }, annotations: { a: 'b' } },
        spec: {
          containers: [
            { name: 'sidecar', image: 's' },
            { name: 'app', image: 'a' },
          ],
        },
      });
      assert.deepEqual(
        (object as Record<string, unknown>)['spec'],
        body['spec'],
        'the input is not modified',
      );
    });
  }

  it('uses namespace default for a workload without one', () => {
    const view = podViewOf({ kind: 'Deployment', metadata: {}, spec: { template } });
    assert.ok(typeof view !== 'string');
    assert.equal(view.pod.metadata.namespace, 'default');
  });

  it('returns a Pod as it is', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [] },
    };
    const view = podViewOf(pod);
    assert.ok(typeof view !== 'string');
    assert.deepEqual(view.withPod(view.pod), pod);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['no kind', {}, /no kind/],
    [
      'an unknown kind',
      { kind: 'Service' },
      /kind Service is not supported \(expected one of Pod, Deployment/,
    ],
    ['a Pod without spec', { kind: 'Pod' }, /no spec/],
    [
      'a Deployment without template',
      { kind: 'Deployment', spec: {} },
      /no pod template at \.spec\.template/,
    ],
  ];
  for (const [title, object, message] of bad) {
    it(`explains ${title}`, () => {
      const view = podViewOf(object);
      assert.ok(typeof view === 'string');
      assert.match(view, message);
    });
  }
});
