import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { run } from '@bufbuild/cel';
import fc from 'fast-check';

import type { LabelSelector, LabelSelectorRequirement } from '../../../src/core/api/k8s-types.js';
import { matchSidecarSet, minimalNamespaceLabels } from '../../../src/core/matching/match.js';
import type { Labels } from '../../../src/core/matching/selector.js';
import {
  MAX_EXPRESSION_CODE_POINTS,
  SCOPE_CONDITION_NAME,
  fittingScopeLevels,
  scopeExpression,
  scopeMatchConditions,
  webhookScopes,
} from '../../../src/core/scope/cel.js';
import type { WebhookScope } from '../../../src/core/scope/webhook-scope.js';
import {
  clauseAdmits,
  podInWebhookScope,
  webhookScopeLevels,
} from '../../../src/core/scope/webhook-scope.js';
import type { SidecarSet, SidecarSetSpec } from '../../../src/core/api/sidecarset-types.js';
import { makeSidecarSet } from '../../support/factories.js';

const NS_LABEL = 'kubernetes.io/metadata.name';

/** What the API server decides with the scope's CEL condition, evaluated by a CEL implementation. */
function celAdmits(scope: WebhookScope, podLabels: Labels | undefined, namespace: string): boolean {
  const conditions = scopeMatchConditions(scope);
  // Plain objects: the CEL library reads prototype-less ones (fast-check's) as messages.
  const metadata = podLabels === undefined ? {} : { labels: { ...podLabels } };
  return conditions.every((c) => {
    const result = run(c.expression, { object: { metadata }, request: { namespace } });
    assert.equal(typeof result, 'boolean', `${c.expression} is not a bool`);
    return result === true;
  });
}

function namespaceLabels(namespace: string, extra: Labels = {}): Labels {
  return { ...minimalNamespaceLabels(namespace), ...extra };
}

function matchedBySome(
  sets: readonly SidecarSet[],
  podLabels: Labels,
  namespace: string,
  nsLabels: Labels,
): boolean {
  const pod = { metadata: { labels: { ...podLabels }, namespace } };
  return sets.some((ss) => matchSidecarSet(ss, pod, namespace, { get: () => nsLabels }).matched);
}

const ss = (name: string, spec: Partial<SidecarSetSpec>): SidecarSet => makeSidecarSet(name, spec);

describe('webhookScopeLevels', () => {
  it('admits no pod when no SidecarSet can match one (none, paused, empty selector)', () => {
    const sets = [
      ss('paused', { injectionStrategy: { paused: true } }),
      ss('empty', { selector: {} }),
      ss('disjoint', { namespace: 'a', namespaceSelector: { matchLabels: { [NS_LABEL]: 'b' } } }),
    ];
    for (const given of [[], sets]) {
      const [narrowest] = webhookScopeLevels(given);
      assert.deepEqual(scopeMatchConditions(narrowest as WebhookScope), [
        { name: SCOPE_CONDITION_NAME, expression: 'false' },
      ]);
      assert.equal(podInWebhookScope(narrowest as WebhookScope, { app: 'web' }, 'a', {}), false);
    }
  });

  it('renders each SidecarSet as its namespace and its selector', () => {
    const scope = webhookScopeLevels([
      ss('a', { namespace: 'shop', selector: { matchLabels: { app: 'web' } } }),
      ss('b', {
        namespace: 'shop',
        selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }] },
      }),
      ss('c', { selector: { matchExpressions: [{ key: 'mesh', operator: 'DoesNotExist' }] } }),
    ])[0] as WebhookScope;
    assert.equal(scope.precision, 'selectors');
    const L = 'object.metadata.labels';
    assert.equal(
      scopeExpression(scope.clauses ?? []),
      `has(${L}) ? (request.namespace == "shop" && (("app" in ${L} && ${L}["app"] == "web") || ("tier" in ${L} && ${L}["tier"] in ["x", "y"]))) || !("mesh" in ${L}) : true`,
    );
    assert.equal(celAdmits(scope, { app: 'web' }, 'shop'), true);
    assert.equal(celAdmits(scope, { app: 'web', mesh: 'on' }, 'other'), false);
    assert.equal(celAdmits(scope, undefined, 'other'), true);
  });

  it('puts namespace names and the requirements every SidecarSet shares in the selectors', () => {
    const team = { matchExpressions: [{ key: 'team', operator: 'Exists' }] };
    const levels = webhookScopeLevels([
      ss('a', {
        namespaceSelector: { matchLabels: { [NS_LABEL]: 'shop', env: 'prod' }, ...team },
        selector: { matchLabels: { app: 'web', inject: 'yes' } },
      }),
      ss('b', {
        namespace: 'pay',
        namespaceSelector: { matchLabels: { env: 'prod' } },
        selector: { matchLabels: { inject: 'yes' } },
      }),
    ]);
    for (const scope of levels) {
      assert.deepEqual(scope.namespaceSelector, [
        { key: 'env', operator: 'In', values: ['prod'] },
        { key: NS_LABEL, operator: 'In', values: ['pay', 'shop'] },
      ]);
      assert.deepEqual(scope.objectSelector, [{ key: 'inject', operator: 'In', values: ['yes'] }]);
    }
    assert.deepEqual(
      levels.map((l) => l.precision),
      ['selectors', 'label-keys', 'namespaces', 'everything'],
    );
    const byNamespace = levels[2] as WebhookScope;
    assert.equal(
      scopeExpression(byNamespace.clauses ?? []),
      'request.namespace in ["pay", "shop"]',
    );
    const prod = namespaceLabels('pay', { env: 'prod' });
    assert.equal(podInWebhookScope(byNamespace, { inject: 'yes' }, 'pay', prod), true);
    assert.equal(podInWebhookScope(byNamespace, { inject: 'no' }, 'pay', prod), false);
    const dev = namespaceLabels('pay', { env: 'dev' });
    assert.equal(podInWebhookScope(byNamespace, { inject: 'yes' }, 'pay', dev), false);
    const stranger = namespaceLabels('other', { env: 'prod' });
    assert.equal(
      podInWebhookScope(levels[3] as WebhookScope, { inject: 'yes' }, 'other', stranger),
      false,
    );
  });

  it('has no namespaces level when a SidecarSet may match in any namespace', () => {
    const levels = webhookScopeLevels([ss('a', {}), ss('b', { namespace: 'x' })]);
    assert.deepEqual(
      levels.map((l) => l.precision),
      ['selectors', 'label-keys', 'everything'],
    );
    assert.deepEqual(scopeMatchConditions(levels[2] as WebhookScope), []);
  });

  it('keeps one required label per SidecarSet at label-keys, merging values of one key', () => {
    const levels = webhookScopeLevels([
      ss('a', { selector: { matchLabels: { app: 'a', tier: 'front' } } }),
      ss('b', { selector: { matchLabels: { app: 'b' } } }),
      ss('c', { selector: { matchExpressions: [{ key: 'mesh', operator: 'Exists' }] } }),
      ss('d', {
        namespace: 'n',
        selector: { matchExpressions: [{ key: 'mesh', operator: 'NotIn', values: ['off'] }] },
      }),
    ]);
    const keys = levels[1] as WebhookScope;
    assert.deepEqual(keys.clauses, [
      { namespaces: ['n'], labels: [] },
      { labels: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] },
      { labels: [{ key: 'mesh', operator: 'Exists' }] },
    ]);
  });

  it('treats a selector with an unknown operator as matching any labels (wider, never narrower)', () => {
    const odd: LabelSelectorRequirement = { key: 'k', operator: 'Near' };
    const [scope] = webhookScopeLevels([
      ss('a', { namespace: 'x', selector: { matchExpressions: [odd] } }),
      ss('b', {
        namespaceSelector: { matchExpressions: [odd] },
        selector: { matchLabels: { app: 'b' } },
      }),
    ]);
    assert.equal(podInWebhookScope(scope as WebhookScope, {}, 'x', {}), true);
    assert.equal(podInWebhookScope(scope as WebhookScope, { app: 'b' }, 'y', {}), true);
    assert.equal(podInWebhookScope(scope as WebhookScope, {}, 'y', {}), false);
  });

  it('renders In and NotIn without values as what they mean', () => {
    const scope = webhookScopeLevels([
      ss('a', { selector: { matchExpressions: [{ key: 'k', operator: 'In', values: [] }] } }),
      ss('b', {
        namespace: 'n',
        selector: { matchExpressions: [{ key: 'k', operator: 'NotIn', values: [] }] },
      }),
    ])[0] as WebhookScope;
    assert.equal(scopeExpression(scope.clauses ?? []), 'request.namespace == "n"');
    assert.equal(celAdmits(scope, { k: 'v' }, 'n'), true);
    assert.equal(celAdmits(scope, { k: 'v' }, 'm'), false);
  });
});

describe('fittingScopeLevels', () => {
  const many = (count: number): SidecarSet[] =>
    Array.from({ length: count }, (_, i) =>
      ss(`s${String(i)}`, {
        namespace: `team-${String(i % 50)}`,
        selector: { matchLabels: { app: `app-${String(i)}`, tier: `tier-${String(i)}` } },
      }),
    );

  it('starts at the narrowest scope whose expression fits the API server limit', () => {
    assert.equal(webhookScopes(many(100))[0]?.precision, 'selectors');
    const large = webhookScopes(many(3000));
    assert.equal(large[0]?.precision, 'label-keys');
    for (const scope of large) {
      for (const c of scopeMatchConditions(scope)) {
        assert.ok([...c.expression].length <= MAX_EXPRESSION_CODE_POINTS);
      }
    }
    assert.deepEqual(
      fittingScopeLevels(webhookScopeLevels(many(100)), 1000).map((l) => l.precision),
      ['namespaces', 'everything'],
    );
    assert.deepEqual(
      fittingScopeLevels(webhookScopeLevels([ss('any', {})]), 10).map((l) => l.precision),
      ['everything'],
    );
  });
});

describe('the scope against the matcher (properties)', () => {
  const key = fc.constantFrom('app', 'tier', 'mesh');
  const value = fc.constantFrom('a', 'b', 'c');
  const requirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
    fc.record({
      key,
      operator: fc.constantFrom('In', 'NotIn'),
      values: fc.array(value, { maxLength: 3 }),
    }),
    fc.record({ key, operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  );
  const selector: fc.Arbitrary<LabelSelector> = fc.record(
    {
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(requirement, { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  const namespace = fc.constantFrom('ns1', 'ns2', 'ns3');
  const nsKey = fc.constantFrom('env', NS_LABEL);
  const nsSelector: fc.Arbitrary<LabelSelector> = fc.oneof(
    fc.record({ matchLabels: fc.dictionary(nsKey, fc.constantFrom('prod', 'ns1', 'ns2')) }),
    fc.record({
      matchExpressions: fc.array(
        fc.record({
          key: nsKey,
          operator: fc.constantFrom('In', 'NotIn'),
          values: fc.array(fc.constantFrom('prod', 'ns1', 'ns2'), { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
    }),
  );
  const spec: fc.Arbitrary<Partial<SidecarSetSpec>> = fc.record(
    {
      selector,
      namespace,
      namespaceSelector: nsSelector,
      injectionStrategy: fc.record({ paused: fc.boolean() }),
    },
    { requiredKeys: ['selector'] },
  );
  const sidecarSets = fc
    .array(spec, { maxLength: 5 })
    .map((specs) => specs.map((s, i) => ss(`s${String(i)}`, s)));
  const pod = fc.record({
    labels: fc.option(fc.dictionary(key, value), { nil: undefined }),
    namespace,
    nsExtra: fc.dictionary(fc.constant('env'), fc.constantFrom('prod', 'dev')),
  });

  it('never leaves out a pod some SidecarSet matches, at any level, in CEL as in process', () => {
    fc.assert(
      fc.property(sidecarSets, pod, (sets, p) => {
        const nsLabels = namespaceLabels(p.namespace, p.nsExtra);
        const labels = p.labels ?? {};
        const matched = matchedBySome(sets, labels, p.namespace, nsLabels);
        for (const scope of webhookScopeLevels(sets)) {
          const inProcess = podInWebhookScope(scope, labels, p.namespace, nsLabels);
          if (matched) assert.ok(inProcess, `${scope.precision} leaves out a matched pod`);
          const clausesAdmit =
            scope.clauses?.some((c) => clauseAdmits(c, labels, p.namespace)) ?? true;
          assert.equal(celAdmits(scope, p.labels, p.namespace), clausesAdmit);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('widens from level to level', () => {
    fc.assert(
      fc.property(sidecarSets, pod, (sets, p) => {
        const nsLabels = namespaceLabels(p.namespace, p.nsExtra);
        const admitted = webhookScopeLevels(sets).map((scope) =>
          podInWebhookScope(scope, p.labels ?? {}, p.namespace, nsLabels),
        );
        admitted.forEach((now, i) => {
          if (now && i + 1 < admitted.length) assert.ok(admitted[i + 1]);
        });
      }),
    );
  });

  it('is exact at the selectors level for SidecarSets without namespace selectors', () => {
    const plain = sidecarSets.map((sets) =>
      sets.map((s) => {
        const spec = { ...s.spec };
        delete spec.namespaceSelector;
        return { ...s, spec };
      }),
    );
    fc.assert(
      fc.property(plain, pod, (sets, p) => {
        const nsLabels = namespaceLabels(p.namespace);
        const labels = p.labels ?? {};
        const scope = webhookScopeLevels(sets)[0] as WebhookScope;
        assert.equal(
          podInWebhookScope(scope, labels, p.namespace, nsLabels),
          matchedBySome(sets, labels, p.namespace, nsLabels),
        );
      }),
    );
  });
});
