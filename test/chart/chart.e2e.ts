/** charts/sidecarset with a real helm: lint, the values schema, and what the values change. */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';

import type { KubeObject, Tools } from './tools.js';
import { CHART, MANIFESTS, chartTools, helmTemplate, parseObjects, run } from './tools.js';

const tools = await chartTools();
const skip = 'skip' in tools ? tools.skip : false;

interface Webhook {
  name: string;
  failurePolicy: string;
  timeoutSeconds: number;
  clientConfig: { url?: string; service?: unknown; caBundle?: string };
  namespaceSelector?: { matchExpressions: { key: string; values?: string[] }[] };
}

interface RuleSpec {
  groups: { rules: { annotations?: Record<string, string> }[] }[];
}

const webhooks = (objects: readonly KubeObject[]): Webhook[] =>
  objects.flatMap((o) => (o['webhooks'] as Webhook[] | undefined) ?? []);

function container(objects: readonly KubeObject[]): {
  image: string;
  env: { name: string; value?: string }[];
} {
  const deployment = objects.find((o) => o.kind === 'Deployment');
  assert.ok(deployment);
  const spec = deployment['spec'] as {
    template: {
      spec: { containers: { image: string; env: { name: string; value?: string }[] }[] };
    };
  };
  const [first] = spec.template.spec.containers;
  assert.ok(first);
  return first;
}

describe('charts/sidecarset', { skip }, () => {
  let t: Tools;
  before(() => {
    if (!('skip' in tools)) t = tools;
  });

  for (const set of [
    [],
    ['certificates.source=certManager'],
    ['monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true'],
    ['monitoring.podMonitor.enabled=true,monitoring.dashboard.enabled=true'],
    ['certificates.source=secret,webhook.url=https://127.0.0.1:9443,certificates.caBundle=Y2E='],
    ['webhook.url=https://127.0.0.1:9443,certificates.selfManaged.ipAddresses={127.0.0.1,::1}'],
    ['replicas=1,crds.keep=false,tests.enabled=false'],
  ]) {
    it(`passes helm lint --strict with ${set.join(' ') || 'the default values'}`, () => {
      const r = run(t.helm, ['lint', '--strict', CHART, ...set.flatMap((s) => ['--set', s])]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });
  }

  it('refuses values the schema does not allow', () => {
    for (const bad of [
      'webhook.failurePolicy.pods=Sometimes',
      'certificates.source=vault',
      'replicas=-1',
      'webhook.url=http://127.0.0.1:9443',
      // A URL with a certificate of the user's own: without its CA nothing would trust the webhook.
      'certificates.source=secret,webhook.url=https://127.0.0.1:9443',
      'certificates.selfManaged.ipAddresses={localhost}',
      'certificates.selfManaged.unknown=1',
      'webhook.jobSidecars=sometimes',
      'unknownKey=1',
    ]) {
      const r = run(t.helm, ['template', 'x', CHART, '--set', bad]);
      assert.notEqual(r.status, 0, bad);
      assert.match(r.stderr, /values don't meet the specifications of the schema/, bad);
    }
  });

  it('points every webhook at webhook.url with the caBundle given', () => {
    const all = webhooks(
      helmTemplate(t, [
        'certificates.source=secret',
        'webhook.url=https://127.0.0.1:9443/',
        'certificates.caBundle=Y2E=',
      ]),
    );
    assert.deepEqual(
      all.map((w) => w.clientConfig),
      ['/mutate-pods', '/mutate-sidecarsets', '/validate-sidecarsets'].map((path) => ({
        url: `https://127.0.0.1:9443${path}`,
        caBundle: 'Y2E=',
      })),
    );
  });

  it('sets failure policies, timeout and the namespaces left alone', () => {
    const all = webhooks(
      helmTemplate(t, [
        'webhook.failurePolicy.pods=Fail',
        'webhook.timeoutSeconds=10',
        'installation.namespace=platform',
        'webhook.excludedNamespaces={kube-system}',
      ]),
    );
    assert.deepEqual(
      all.map((w) => [w.name, w.failurePolicy, w.timeoutSeconds]),
      [
        ['mpod.sidecarset.kruise.io', 'Fail', 10],
        ['msidecarset.sidecarset.kruise.io', 'Fail', 10],
        ['vsidecarset.sidecarset.kruise.io', 'Fail', 10],
      ],
    );
    assert.deepEqual(all[0]?.namespaceSelector?.matchExpressions[0]?.values, [
      'kube-system',
      'platform',
    ]);
  });

  it('passes the controller flags that are set, and only those', () => {
    const env = (set: string[]): string[] =>
      container(helmTemplate(t, set)).env.map((e) => `${e.name}=${e.value ?? ''}`);
    const defaults = env([]);
    assert.ok(defaults.includes('SIDECARSET_LEADER_ELECT=true'));
    assert.ok(!defaults.some((e) => /^SIDECARSET_(CONTROLLER|WORKERS|QPS|BURST|DRY_RUN)=/.test(e)));
    const set = env([
      'controller.enabled=false',
      'controller.workers=4',
      'controller.qps=5',
      'controller.burst=10',
      'controller.dryRun=true',
      'controller.leaderElection.enabled=false',
    ]);
    for (const e of [
      'SIDECARSET_CONTROLLER=false',
      'SIDECARSET_WORKERS=4',
      'SIDECARSET_QPS=5',
      'SIDECARSET_BURST=10',
      'SIDECARSET_DRY_RUN=true',
      'SIDECARSET_LEADER_ELECT=false',
    ])
      assert.ok(set.includes(e), e);
  });

  it('passes webhook.jobSidecars when it is not the default', () => {
    const jobSidecars = (set: string[]): string | undefined =>
      container(helmTemplate(t, set)).env.find((e) => e.name === 'SIDECARSET_JOB_SIDECARS')?.value;
    assert.equal(jobSidecars([]), undefined);
    assert.equal(jobSidecars(['webhook.jobSidecars=native']), undefined);
    assert.equal(jobSidecars(['webhook.jobSidecars=container']), 'container');
  });

  it('passes webhook.patchPodMetadataAllowList as JSON, and none by default (deny)', () => {
    const allowList = (set: string[]): string | undefined =>
      container(helmTemplate(t, set)).env.find(
        (e) => e.name === 'SIDECARSET_PATCH_POD_METADATA_ALLOWLIST',
      )?.value;
    assert.equal(allowList([]), undefined);
    const set = [
      'webhook.patchPodMetadataAllowList.rules[0].allowedAnnotationKeyExprs[0]=^example[.]com/',
      'webhook.patchPodMetadataAllowList.rules[0].selector.matchLabels.team=mesh',
    ];
    assert.deepEqual(JSON.parse(allowList(set) ?? ''), {
      rules: [
        {
          allowedAnnotationKeyExprs: ['^example[.]com/'],
          selector: { matchLabels: { team: 'mesh' } },
        },
      ],
    });
  });

  it('renders the guardrail policy only when guardrail.enabled', () => {
    const kinds = (set: string[]): string[] =>
      helmTemplate(t, set)
        .map((o) => o.kind)
        .filter((k) => k.startsWith('ValidatingAdmissionPolicy'));
    assert.deepEqual(kinds([]), []);
    assert.deepEqual(kinds(['guardrail.enabled=true']), [
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
  });

  it('manages its own certificate by default: no mount, no caBundle, RBAC for both', () => {
    const objects = helmTemplate(t, ['webhook.url=https://127.0.0.1:9443']);
    assert.deepEqual(
      webhooks(objects).map((w) => w.clientConfig.caBundle),
      [undefined, undefined, undefined],
    );
    const env = container(objects).env.map((e) => e.name);
    assert.ok(!env.some((name) => name.startsWith('SIDECARSET_CERT')), env.join());
    const deployment = JSON.stringify(objects.find((o) => o.kind === 'Deployment'));
    assert.ok(!deployment.includes('/etc/sidecarset/tls'), deployment);
    const certificateRbac = objects
      .filter((o) => o.metadata.name === 'sidecarset-webhook-certificates')
      .map((o) => o.kind)
      .sort();
    assert.deepEqual(certificateRbac, ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
    for (const source of ['secret', 'certManager'])
      assert.ok(
        !helmTemplate(t, [`certificates.source=${source}`]).some(
          (o) => o.metadata.name === 'sidecarset-webhook-certificates',
        ),
        source,
      );
    const withIps = container(
      helmTemplate(t, ['certificates.selfManaged.ipAddresses={127.0.0.1,::1}']),
    ).env;
    assert.deepEqual(
      withIps.find((e) => e.name === 'SIDECARSET_CERT_IP_ADDRESSES'),
      { name: 'SIDECARSET_CERT_IP_ADDRESSES', value: '127.0.0.1,::1' },
    );
  });

  it('keeps the CRD on helm uninstall unless crds.keep=false', () => {
    const crd = (set: string[]): KubeObject | undefined =>
      helmTemplate(t, set).find((o) => o.kind === 'CustomResourceDefinition');
    assert.deepEqual(crd([])?.metadata.annotations, { 'helm.sh/resource-policy': 'keep' });
    assert.equal(crd(['crds.keep=false'])?.metadata.annotations, undefined);
    assert.deepEqual(crd(['certificates.source=certManager'])?.metadata.annotations, {
      'cert-manager.io/inject-ca-from': 'sidecarset-system/sidecarset-webhook-tls',
      'helm.sh/resource-policy': 'keep',
    });
    assert.equal(crd(['crds.managed=false']), undefined);
  });

  it('has a disruption budget that lets a drain evict the only replica', () => {
    for (const replicas of ['1', '2', '3']) {
      const pdb = helmTemplate(t, [`replicas=${replicas}`]).find(
        (o) => o.kind === 'PodDisruptionBudget',
      );
      assert.deepEqual((pdb?.['spec'] as { maxUnavailable?: number }).maxUnavailable, 1);
      assert.ok(!('minAvailable' in (pdb?.['spec'] as object)), replicas);
    }
  });

  it('runs sidecarset check as a helm test in the release namespace, with read-only RBAC', () => {
    const objects = helmTemplate(t, ['installation.namespace=platform']).filter(
      (o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'test',
    );
    assert.deepEqual(objects.map((o) => o.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'Pod',
      'Role',
      'RoleBinding',
      'ServiceAccount',
    ]);
    // `helm test --logs` reads every test hook as a Pod of the release's namespace: the Pod is the
    // only hook, and it lives there (helm template's namespace is `default`).
    const hooks = objects.filter((o) => o.metadata.annotations?.['helm.sh/hook'] === 'test');
    assert.deepEqual(
      hooks.map((o) => [o.kind, o.metadata.namespace]),
      [['Pod', 'default']],
    );
    const account = objects.find((o) => o.kind === 'ServiceAccount');
    assert.equal(account?.metadata.namespace, 'default');
    const pod = hooks[0];
    const spec = pod?.['spec'] as {
      serviceAccountName: string;
      containers: { image: string; command: string[]; args: string[] }[];
    };
    assert.equal(spec.serviceAccountName, 'sidecarset-test');
    assert.deepEqual(
      spec.containers.map((c) => [c.image, ...c.command, ...c.args]),
      [
        [
          'sidecarset:0.2.0-dev',
          'node',
          '/app/bin/sidecarset.js',
          'check',
          '--namespace',
          'platform',
        ],
      ],
    );
    const role = objects.find((o) => o.kind === 'Role');
    assert.equal(role?.metadata.namespace, 'platform');
    for (const binding of objects.filter((o) => o.kind.endsWith('Binding'))) {
      assert.deepEqual(binding['subjects'], [
        { kind: 'ServiceAccount', name: 'sidecarset-test', namespace: 'default' },
      ]);
    }
    const verbs = objects
      .flatMap((o) => (o['rules'] as { verbs: string[] }[] | undefined) ?? [])
      .flatMap((r) => r.verbs);
    assert.ok(verbs.length > 0);
    for (const verb of verbs) assert.ok(['get', 'list'].includes(verb), verb);
    assert.ok(
      !helmTemplate(t, ['tests.enabled=false']).some((o) => o.metadata.name === 'sidecarset-test'),
    );
  });

  it('packages with helm package, the linked CRD, rules and dashboard inside', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chart-package-'));
    try {
      const r = run(t.helm, ['package', CHART, '--destination', dir]);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(await readdir(dir), ['sidecarset-0.2.0-dev.tgz']);
      const args = ['template', 'x', join(dir, 'sidecarset-0.2.0-dev.tgz')];
      const on = ['monitoring.prometheusRule.enabled=true', 'monitoring.dashboard.enabled=true'];
      const kinds = parseObjects(
        run(t.helm, [...args, ...on.flatMap((s) => ['--set', s])]).stdout,
      ).map((o) => o.kind);
      for (const kind of ['CustomResourceDefinition', 'PrometheusRule', 'ConfigMap'])
        assert.ok(kinds.includes(kind), kind);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('puts every runbook_url under runbookBaseUrl (chart) or a replacement (kustomize)', async () => {
    const base = 'https://docs.example.com/sidecarset/monitoring.md';
    const urls = (objects: KubeObject[]): string[] =>
      objects
        .filter((o) => o.kind === 'PrometheusRule')
        .flatMap((o) => (o['spec'] as RuleSpec).groups.flatMap((g) => g.rules))
        .map((r) => r.annotations?.['runbook_url'] ?? '');
    const fromChart = urls(
      helmTemplate(t, [
        'monitoring.prometheusRule.enabled=true',
        `monitoring.prometheusRule.runbookBaseUrl=${base}`,
      ]),
    );
    assert.ok(fromChart.length >= 10);
    for (const url of fromChart)
      assert.match(
        url,
        /^https:\/\/docs\.example\.com\/sidecarset\/monitoring\.md#sidecarset[a-z]+$/,
      );
    // docs/monitoring.md's overlay.
    const dir = await mkdtemp(join(tmpdir(), 'runbook-overlay-'));
    try {
      await writeFile(
        join(dir, 'kustomization.yaml'),
        [
          'resources:',
          `  - ${relative(dir, MANIFESTS)}`,
          '  - runbook-base.yaml',
          'components:',
          `  - ${relative(dir, join(MANIFESTS, 'monitoring'))}`,
          'replacements:',
          '  - source: { kind: ConfigMap, name: sidecarset-runbooks, fieldPath: data.baseUrl }',
          '    targets:',
          '      - select: { kind: PrometheusRule, name: sidecarset }',
          "        fieldPaths: ['spec.groups.*.rules.*.annotations.runbook_url']",
          "        options: { delimiter: '#', index: 0 }",
          '',
        ].join('\n'),
      );
      await writeFile(
        join(dir, 'runbook-base.yaml'),
        [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          '  name: sidecarset-runbooks',
          '  annotations:',
          "    config.kubernetes.io/local-config: 'true'",
          'data:',
          `  baseUrl: ${base}`,
          '',
        ].join('\n'),
      );
      const r = run(t.kubectl, ['kustomize', dir]);
      assert.equal(r.status, 0, r.stderr);
      const objects = parseObjects(r.stdout);
      assert.ok(!objects.some((o) => o.metadata.name === 'sidecarset-runbooks'));
      assert.deepEqual(urls(objects), fromChart);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('installs on Kubernetes 1.30 and later, with no upper bound', () => {
    for (const version of ['1.30.0', '1.33.13', '1.37.2', '1.38.0', '1.45.1']) {
      const r = run(t.helm, ['template', 'x', CHART, '--kube-version', version]);
      assert.equal(r.status, 0, `${version}: ${r.stderr}`);
    }
    const old = run(t.helm, ['template', 'x', CHART, '--kube-version', '1.29.9']);
    assert.notEqual(old.status, 0);
    assert.match(old.stderr, /kubeVersion/);
  });

  it('tags the image with the appVersion unless image.tag says otherwise', () => {
    assert.equal(container(helmTemplate(t)).image, 'sidecarset:0.2.0-dev');
    assert.equal(
      container(helmTemplate(t, ['image.repository=r.example/s', 'image.tag=1.2.3'])).image,
      'r.example/s:1.2.3',
    );
  });
});
