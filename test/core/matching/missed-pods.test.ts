import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SIDECARSET_INJECTED_LIST } from '../../../src/core/api/annotations.js';
import type { Pod } from '../../../src/core/api/k8s-types.js';
import { ANY_NAMESPACE } from '../../../src/core/matching/match.js';
import { isMissedBy } from '../../../src/core/matching/missed-pods.js';
import type { SidecarSet, SidecarSetSpec } from '../../../src/core/api/sidecarset-types.js';
import { makePod, makeSidecarSet } from '../../support/factories.js';

const SS_CREATED = '2026-12-01T12:00:00Z';

function sidecarSet(spec: Partial<SidecarSetSpec> = {}): SidecarSet {
  const ss = makeSidecarSet('agent', spec);
  ss.metadata.creationTimestamp = SS_CREATED;
  return ss;
}

function pod(created: string, overrides: Parameters<typeof makePod>[0] = {}): Pod {
  const p = makePod({ namespace: 'shop', labels: { app: 'web' }, ...overrides });
  p.metadata.creationTimestamp = created;
  return p;
}

describe('isMissedBy', () => {
  it('is a matched pod created since the SidecarSet without its injection', () => {
    assert.equal(isMissedBy(sidecarSet(), pod('2026-12-01T12:00:05Z'), ANY_NAMESPACE), true);
    assert.equal(isMissedBy(sidecarSet(), pod(SS_CREATED), ANY_NAMESPACE), true, 'same second');
  });

  it('is not a pod created before the SidecarSet, or of unknown age', () => {
    assert.equal(isMissedBy(sidecarSet(), pod('2026-12-01T11:59:59Z'), ANY_NAMESPACE), false);
    assert.equal(isMissedBy(sidecarSet(), pod(''), ANY_NAMESPACE), false);
  });

  it('reads creation times handed over as Date objects (@kubernetes/client-node)', () => {
    const p = pod('');
    (p.metadata as { creationTimestamp?: unknown }).creationTimestamp = new Date(
      '2026-12-01T12:00:05Z',
    );
    assert.equal(isMissedBy(sidecarSet(), p, ANY_NAMESPACE), true);
  });

  it('is not a pod that carries the injection, or that the SidecarSet does not match', () => {
    const injected = pod('2026-12-01T12:00:05Z', {
      annotations: { [SIDECARSET_INJECTED_LIST]: 'other,agent' },
    });
    assert.equal(isMissedBy(sidecarSet(), injected, ANY_NAMESPACE), false);
    const late = '2026-12-01T12:00:05Z';
    assert.equal(
      isMissedBy(sidecarSet(), pod(late, { labels: { app: 'db' } }), ANY_NAMESPACE),
      false,
    );
    assert.equal(isMissedBy(sidecarSet({ namespace: 'pay' }), pod(late), ANY_NAMESPACE), false);
    assert.equal(
      isMissedBy(sidecarSet({ injectionStrategy: { paused: true } }), pod(late), ANY_NAMESPACE),
      false,
    );
  });

  it('is not a pod the webhook is configured not to see', () => {
    const late = pod('2026-12-01T12:00:05Z');
    const optOut = {
      namespaceSelector: {
        matchExpressions: [
          { key: 'sidecarset.kruise.io/injection', operator: 'NotIn', values: ['disabled'] },
        ],
      },
    };
    const disabled = { get: () => ({ 'sidecarset.kruise.io/injection': 'disabled' }) };
    assert.equal(isMissedBy(sidecarSet(), late, disabled, optOut), false);
    assert.equal(isMissedBy(sidecarSet(), late, ANY_NAMESPACE, optOut), true);
    assert.equal(isMissedBy(sidecarSet(), late, { get: () => undefined }, optOut), false);
    const objectSelector = { matchLabels: { inject: 'yes' } };
    assert.equal(isMissedBy(sidecarSet(), late, ANY_NAMESPACE, { objectSelector }), false);
  });

  it('is not a pod judged by a selector with an unknown operator', () => {
    const odd = sidecarSet({ selector: { matchExpressions: [{ key: 'app', operator: 'Near' }] } });
    assert.equal(isMissedBy(odd, pod('2026-12-01T12:00:05Z'), ANY_NAMESPACE), false);
  });
});
