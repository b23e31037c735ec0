/**
 * decidePod's failures: what the API server (and the user behind kubectl) is told, and what the
 * log gets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decidePod } from '../../../src/core/admission/pod-webhook.js';
import type { AdmissionRequest } from '../../../src/core/admission/review.js';
import type { Pod } from '../../../src/core/api/k8s-types.js';
import { FIXED_NOW, makePod, makeSidecarSet, sidecar } from '../../support/factories.js';
import { snapshotOf } from '../../support/injection-snapshot.js';

const env = { now: FIXED_NOW, random: () => 0.5 };

function create(pod: unknown): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'default',
    operation: 'CREATE',
    object: pod,
  };
}

describe('decidePod failures', () => {
  it('names the field of a malformed pod instead of failing inside injection', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ volumes: {} }, 'spec.volumes must be a list, not an object'],
      [{ initContainers: 'x' }, 'spec.initContainers must be a list, not a string'],
      [
        { containers: [{ name: 'app', env: { A: '1' } }] },
        'spec.containers[0].env must be a list, not an object',
      ],
      [{ containers: [{ image: 'x' }] }, 'spec.containers[0].name must be a string, not missing'],
      [{ imagePullSecrets: [null] }, 'spec.imagePullSecrets[0] must be an object, not null'],
    ];
    for (const [spec, problem] of cases) {
      const pod = makePod();
      const decision = decidePod(
        create({ ...pod, spec: { ...pod.spec, ...spec } }),
        snapshotOf([makeSidecarSet('s')]),
        env,
      );
      assert.equal(decision.response.allowed, false);
      assert.equal(decision.response.status?.code, 400);
      assert.equal(
        decision.response.status.message,
        `request.object is not a valid Pod: ${problem}`,
      );
      assert.equal(decision.problem?.level, 'warn');
    }
    const labels = decidePod(
      create({ ...makePod(), metadata: { name: 'p', labels: { app: 1 } } }),
      snapshotOf([]),
      env,
    );
    assert.equal(
      labels.response.status?.message,
      'request.object is not a valid Pod: metadata.labels[app] must be a string, not a number',
    );
  });

  it('accepts null lists, as Go writes nil slices', () => {
    const pod = makePod();
    const decision = decidePod(
      create({ ...pod, spec: { ...pod.spec, volumes: null, initContainers: null } }),
      snapshotOf([makeSidecarSet('s')]),
      env,
    );
    assert.equal(decision.outcome, 'injected');
  });

  it('names the SidecarSet that breaks injection and what is wrong with it, at error', () => {
    // A SidecarSet that skipped validation (the caches validate; this one is built by hand).
    const broken = makeSidecarSet('broken', {
      containers: [{ ...sidecar('agent'), env: {} as never }],
    });
    const decision = decidePod(
      create(makePod({ name: 'web-1' })),
      snapshotOf([makeSidecarSet('fine'), broken]),
      env,
    );
    assert.equal(decision.response.allowed, false);
    assert.equal(decision.outcome, 'error');
    const message = decision.response.status?.message ?? '';
    assert.match(
      message,
      /^cannot inject SidecarSet "broken" into pod default\/web-1: SidecarSet "broken" is invalid: spec\.containers\[0\]\.env/,
    );
    assert.doesNotMatch(message, /iterable/);
    assert.equal(decision.problem?.level, 'error');
    assert.ok(decision.problem.err instanceof TypeError, 'the error itself goes to the log');
  });

  it('says it is a bug, without JavaScript internals, when no SidecarSet is at fault', () => {
    const set = makeSidecarSet('s');
    // A getter that throws: nothing the schema can see.
    Object.defineProperty(set.spec, 'containers', {
      get: () => {
        throw new TypeError('base is not iterable');
      },
    });
    const pod: Pod = makePod();
    const decision = decidePod(create(pod), snapshotOf([set]), env);
    assert.equal(
      decision.response.status?.message,
      'cannot inject SidecarSet "s" into pod default/pod-1: the webhook failed unexpectedly; ' +
        'this is a bug, and the webhook log has the error',
    );
    assert.equal(decision.response.status.code, 500);
  });
});
