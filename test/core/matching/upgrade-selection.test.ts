import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ANY_NAMESPACE, minimalNamespaceLabels } from '../../../src/core/matching/match.js';
import { selectsForUpgrade } from '../../../src/core/matching/upgrade-selection.js';
import { makePod, makeSidecarSet } from '../../support/factories.js';

describe('selectsForUpgrade', () => {
  it('ignores an injection pause: pods already injected are still upgraded', () => {
    const paused = makeSidecarSet('s', { injectionStrategy: { paused: true } });
    assert.equal(selectsForUpgrade(paused, makePod(), ANY_NAMESPACE), true);
    assert.equal(paused.spec.injectionStrategy?.paused, true, 'the input is not changed');
  });

  it('applies the selector and the namespace rules', () => {
    assert.equal(
      selectsForUpgrade(makeSidecarSet('s'), makePod({ labels: { app: 'db' } }), ANY_NAMESPACE),
      false,
    );
    const elsewhere = makeSidecarSet('s', { namespace: 'other' });
    assert.equal(selectsForUpgrade(elsewhere, makePod(), ANY_NAMESPACE), false);
    assert.equal(selectsForUpgrade(makeSidecarSet('s'), makePod(), ANY_NAMESPACE), true);
  });

  it('TestScopeNamespacePods: a namespaceSelector keeps the pods of the namespaces it selects', () => {
    const ss = makeSidecarSet('s', { namespaceSelector: { matchLabels: { test: 'true' } } });
    const namespaces = new Map([
      ['test-ns', { ...minimalNamespaceLabels('test-ns'), test: 'true' }],
      ['default', minimalNamespaceLabels('default')],
    ]);
    const pods = Array.from({ length: 100 }, (_, i) =>
      makePod({ name: `pod-${i}`, namespace: i >= 50 ? 'test-ns' : 'default' }),
    );
    const selected = pods.filter((pod) => selectsForUpgrade(ss, pod, namespaces));
    assert.equal(selected.length, 50);
    assert.ok(selected.every((pod) => pod.metadata.namespace === 'test-ns'));
  });
});
