import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { InjectionVerdict } from '../../../src/core/diagnosis/check-inject.js';
import { checkInjection } from '../../../src/core/diagnosis/check-inject.js';
import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { NamespaceLabels } from '../../../src/core/matching/match.js';
import { ANY_NAMESPACE } from '../../../src/core/matching/match.js';
import { withHashes } from '../../../src/core/api/hash.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { makePod, makeSidecarSet, sidecar } from '../../support/factories.js';

const created = (ss: SidecarSet, at: string): SidecarSet => ({
  ...ss,
  metadata: { ...ss.metadata, creationTimestamp: at },
});

function pod(overrides: Parameters<typeof makePod>[0] = {}, at = '2026-01-02T00:00:00Z'): Pod {
  const p = makePod(overrides);
  p.metadata.creationTimestamp = at;
  return p;
}

/** A pod the webhook injected with `ss` as it is now. */
function injectedBy(p: Pod, ...sets: SidecarSet[]): Pod {
  const hashes = Object.fromEntries(
    sets.map((ss) => [
      ss.metadata.name ?? '',
      { hash: withHashes(ss).metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '' },
    ]),
  );
  p.metadata.annotations = {
    'kruise.io/sidecarset-injected-list': sets.map((s) => s.metadata.name).join(','),
    'kruise.io/sidecarset-hash': JSON.stringify(hashes),
  };
  return p;
}

function verdict(
  p: Pod,
  sets: SidecarSet[],
  name: string,
  namespaces: NamespaceLabels = ANY_NAMESPACE,
): InjectionVerdict {
  const found = checkInjection(p, sets, namespaces).verdicts.find((v) => v.sidecarSet === name);
  assert.ok(found, `a verdict for ${name}`);
  return found;
}

const T0 = '2026-01-01T00:00:00Z';
const logtail = created(makeSidecarSet('logtail'), T0);

describe('checkInjection', () => {
  it('an injected, up-to-date pod', () => {
    const v = verdict(injectedBy(pod(), logtail), [logtail], 'logtail');
    assert.equal(v.state, 'Injected');
    assert.equal(v.injected, true);
    assert.equal(v.injects, true);
    assert.equal(v.reason, 'injected; sidecars up to date');
    assert.ok(v.checks.every((c) => c.ok));
  });

  it('an injected pod whose sidecars are outdated, and why they stay so', () => {
    const p = injectedBy(pod(), logtail);
    const newer = {
      ...logtail,
      spec: { ...logtail.spec, containers: [sidecar('logtail-c', { image: 'x:2' })] },
    };
    delete newer.metadata.annotations;
    assert.match(
      verdict(p, [newer], 'logtail').reason,
      /sidecars outdated: the controller upgrades it in place \(sidecarset rollout status logtail\)/,
    );
    const paused = { ...newer, spec: { ...newer.spec, updateStrategy: { paused: true } } };
    assert.match(verdict(p, [paused], 'logtail').reason, /outdated: updateStrategy.paused is true/);
    const notUpdate = { ...newer, spec: { ...newer.spec, updateStrategy: { type: 'NotUpdate' } } };
    assert.match(
      verdict(p, [notUpdate], 'logtail').reason,
      /outdated: updateStrategy.type is NotUpdate/,
    );
  });

  it('an injected pod the SidecarSet no longer selects says so', () => {
    const p = injectedBy(pod({ labels: { app: 'old' } }), logtail);
    const v = verdict(p, [logtail], 'logtail');
    assert.equal(v.state, 'Injected');
    assert.equal(v.injects, false);
    assert.match(v.reason, /^injected; sidecars up to date; spec.selector does not match/);
  });

  it("a pod the selector does not match: the selector's reason", () => {
    const v = verdict(pod({ labels: { app: 'db' } }), [logtail], 'logtail');
    assert.equal(v.state, 'NotInjected');
    assert.equal(v.reason, "spec.selector does not match the pod's labels");
    assert.deepEqual(
      v.checks.filter((c) => !c.ok).map((c) => c.name),
      ['selector'],
    );
  });

  it('an empty selector matches no pod', () => {
    const empty = created(makeSidecarSet('empty', { selector: {} }), T0);
    assert.equal(
      verdict(pod(), [empty], 'empty').reason,
      'spec.selector is empty, which matches no pod',
    );
  });

  it('namespace rules: spec.namespace and namespaceSelector', () => {
    const elsewhere = created(makeSidecarSet('ns', { namespace: 'prod' }), T0);
    assert.equal(
      verdict(pod(), [elsewhere], 'ns').reason,
      'spec.namespace is prod, the pod is in default',
    );
    const here = created(makeSidecarSet('ns', { namespace: 'default' }), T0);
    assert.equal(verdict(pod(), [here], 'ns').checks[0]?.message, 'spec.namespace is default');
    const bySelector = created(
      makeSidecarSet('sel', { namespaceSelector: { matchLabels: { team: 'a' } } }),
      T0,
    );
    const teamA: NamespaceLabels = { get: (n) => (n === 'default' ? { team: 'a' } : undefined) };
    const teamB: NamespaceLabels = { get: (n) => (n === 'default' ? { team: 'b' } : undefined) };
    assert.equal(
      verdict(pod(), [bySelector], 'sel', teamA).checks[0]?.message,
      'namespaceSelector matches namespace default',
    );
    assert.equal(
      verdict(pod(), [bySelector], 'sel', teamB).reason,
      'namespaceSelector does not match the labels of namespace default',
    );
    assert.equal(verdict(pod(), [logtail], 'logtail').checks[0]?.message, 'any namespace');
  });

  it('injectionStrategy.paused stops injection; a pinned revision is named', () => {
    const paused = created(makeSidecarSet('p', { injectionStrategy: { paused: true } }), T0);
    const v = verdict(pod(), [paused], 'p');
    assert.equal(v.state, 'NotInjected');
    assert.equal(v.reason, 'injectionStrategy.paused is true: new pods are not injected');
    const pinned = created(
      makeSidecarSet('p', { injectionStrategy: { revision: { customVersion: 'v1' } } }),
      T0,
    );
    assert.equal(
      verdict(pod(), [pinned], 'p').checks.find((c) => c.name === 'injectionStrategy')?.message,
      'injects revision v1 (injectionStrategy.revision, policy Always)',
    );
  });

  it('a canary that matches the pod replaces its base', () => {
    const canary = created(
      makeSidecarSet(
        'logtail-canary',
        {},
        {
          'apps.kruise.io/sidecarset-canary': 'true',
          'apps.kruise.io/sidecarset-base': 'logtail',
        },
      ),
      T0,
    );
    const v = verdict(pod(), [logtail, canary], 'logtail');
    assert.equal(v.state, 'NotInjected');
    assert.equal(v.reason, 'canary SidecarSet logtail-canary matches the pod too and replaces it');
    // The canary itself does not conflict with its base.
    assert.equal(verdict(pod(), [logtail, canary], 'logtail-canary').state, 'Missed');
  });

  it('conflicts with another SidecarSet that matches the pod, and with app containers', () => {
    const twin = created(makeSidecarSet('twin', { containers: [sidecar('logtail-c')] }), T0);
    const v = verdict(pod(), [logtail, twin], 'logtail');
    assert.equal(v.state, 'NotInjected');
    assert.equal(v.reason, 'container logtail-c already exist in twin');
    const own = pod({ containers: [{ name: 'logtail-c', image: 'mine:1' }] });
    assert.equal(
      verdict(own, [logtail], 'logtail').reason,
      "the pod's own container logtail-c would be replaced by the sidecar",
    );
  });

  it('a matching SidecarSet older than the pod that the pod lacks: missed', () => {
    const v = verdict(pod(), [logtail], 'logtail');
    assert.equal(v.state, 'Missed');
    assert.equal(v.injects, true);
    assert.match(v.reason, /webhook was down or not called/);
  });

  it('a pod older than the SidecarSet is not missing it', () => {
    const v = verdict(pod({}, '2025-12-31T00:00:00Z'), [logtail], 'logtail');
    assert.equal(v.state, 'CreatedBefore');
    assert.match(
      v.reason,
      /created before the SidecarSet; sidecars are injected only when a pod is created/,
    );
  });

  it('without creation times: whether a pod like this one would be injected', () => {
    const v = verdict(makePod(), [makeSidecarSet('logtail')], 'logtail');
    assert.equal(v.state, 'WouldInject');
    assert.equal(v.reason, 'a pod created like this one now gets its sidecars');
    const bad = { ...makePod(), metadata: { ...makePod().metadata, creationTimestamp: 'never' } };
    assert.equal(verdict(bad, [logtail], 'logtail').state, 'WouldInject');
  });

  it('every SidecarSet gets a verdict, in name order; unknown injected names are listed', () => {
    const p = injectedBy(pod(), logtail);
    p.metadata.annotations = {
      ...p.metadata.annotations,
      'kruise.io/sidecarset-injected-list': 'logtail,gone',
    };
    const other = created(
      makeSidecarSet('a-other', { selector: { matchLabels: { app: 'db' } } }),
      T0,
    );
    const result = checkInjection(p, [logtail, other], ANY_NAMESPACE);
    assert.equal(result.pod, 'default/pod-1');
    assert.deepEqual(
      result.verdicts.map((v) => v.sidecarSet),
      ['a-other', 'logtail'],
    );
    assert.deepEqual(result.unknownInjected, ['gone']);
  });

  it("the webhook's scope: in it when a SidecarSet can match the pod, outside it otherwise", () => {
    const inScope = checkInjection(pod(), [logtail], ANY_NAMESPACE).webhookScope;
    assert.equal(inScope.inScope, true);
    assert.equal(inScope.precision, 'selectors');
    const outside = checkInjection(
      pod({ labels: { app: 'db' } }),
      [logtail],
      ANY_NAMESPACE,
    ).webhookScope;
    assert.equal(outside.inScope, false);
    assert.match(outside.message, /not called for pods like this one: no SidecarSet can match it/);
    const unknownNamespace: NamespaceLabels = { get: () => undefined };
    assert.equal(checkInjection(pod(), [logtail], unknownNamespace).webhookScope.inScope, true);
  });

  it("a pod the installed webhook's selectors leave out is not missed: the webhook never sees it", () => {
    const system = pod({ namespace: 'kube-system' });
    const installed = {
      namespaceSelector: {
        matchExpressions: [
          {
            key: 'kubernetes.io/metadata.name',
            operator: 'NotIn' as const,
            values: ['kube-system'],
          },
        ],
      },
    };
    const result = checkInjection(system, [logtail], ANY_NAMESPACE, installed);
    assert.deepEqual(result.webhookScope, {
      inScope: false,
      precision: 'everything',
      message:
        "the pod webhook's namespaceSelector leaves namespace kube-system out: it never sees the pod",
    });
    const [v] = result.verdicts;
    assert.equal(v?.state, 'NotInjected');
    assert.equal(v.reason, result.webhookScope.message);
    // A pod elsewhere is seen, and missed as before.
    assert.equal(
      checkInjection(pod(), [logtail], ANY_NAMESPACE, installed).verdicts[0]?.state,
      'Missed',
    );
    const optOut = {
      objectSelector: {
        matchExpressions: [{ key: 'no-sidecars', operator: 'DoesNotExist' as const }],
      },
    };
    const skipped = checkInjection(
      pod({ labels: { app: 'web', 'no-sidecars': 'true' } }),
      [logtail],
      ANY_NAMESPACE,
      optOut,
    );
    assert.equal(
      skipped.verdicts[0]?.reason,
      "the pod webhook's objectSelector leaves the pod out: it never sees the pod",
    );
    // An injected pod stays injected, whatever the selectors say now.
    const injected = injectedBy(pod({ namespace: 'kube-system' }), logtail);
    assert.equal(
      checkInjection(injected, [logtail], ANY_NAMESPACE, installed).verdicts[0]?.state,
      'Injected',
    );
  });
});
