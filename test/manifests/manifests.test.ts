import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration';
import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';
import { buildCrd, renderCrd } from '../../scripts/gen-crd.js';
import { DEFAULT_CERT_SECRET, DEFAULT_WEBHOOK_CONFIGURATIONS } from '../../src/cli/serve.js';
import { compileCrdSchema } from './crd-schema.js';
import { structuralErrors } from './structural.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MANIFESTS = join(ROOT, 'manifests');
const NAMESPACE = 'sidecarset-system';
const SECRET = 'sidecarset-webhook-tls';
const PLACEHOLDER = 'Q0FfQlVORExFX1BMQUNFSE9MREVS';
/** The server's fixed endpoints (issue 3): every webhook path must be one of these. */
const ENDPOINTS = {
  mutatePods: '/mutate-pods',
  mutateSidecarSets: '/mutate-sidecarsets',
  validateSidecarSets: '/validate-sidecarsets',
  healthz: '/healthz',
  readyz: '/readyz',
  metrics: '/metrics',
} as const;

type Obj = { readonly [key: string]: unknown };

interface Manifest {
  readonly file: string;
  readonly doc: Obj;
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A property path through plain objects and arrays; fails the test if a step is missing. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let cur = value;
  for (const step of path) {
    if (typeof step === 'number') {
      assert.ok(Array.isArray(cur), `expected an array before [${step}]`);
      cur = cur[step];
    } else {
      assert.ok(isObj(cur), `expected an object before .${step}`);
      cur = cur[step];
    }
    assert.notEqual(cur, undefined, `missing ${path.join('.')}`);
  }
  return cur;
}

function obj(value: unknown, ...path: (string | number)[]): Obj {
  const v = at(value, ...path);
  assert.ok(isObj(v), `${path.join('.')} is not an object`);
  return v;
}

function list(value: unknown, ...path: (string | number)[]): unknown[] {
  const v = at(value, ...path);
  assert.ok(Array.isArray(v), `${path.join('.')} is not an array`);
  return v;
}

function objs(value: unknown, ...path: (string | number)[]): Obj[] {
  return list(value, ...path).map((item, i) => {
    assert.ok(isObj(item), `${path.join('.')}[${i}] is not an object`);
    return item;
  });
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function parseText(text: string, label: string): Obj[] {
  const docs: Obj[] = [];
  for (const [i, d] of parseAllDocuments(text).entries()) {
    assert.deepEqual(d.errors, [], `${label} document ${i}`);
    const value: unknown = d.toJS();
    assert.ok(isObj(value), `${label} document ${i} is not an object`);
    docs.push(value);
  }
  return docs;
}

function parseFile(file: string): Obj[] {
  return parseText(readFileSync(file, 'utf8'), file);
}

const yamlFiles = walk(MANIFESTS).filter((f) => /\.ya?ml$/.test(f));
const kustomizations = yamlFiles.filter((f) => f.endsWith('kustomization.yaml'));
const resources: Manifest[] = yamlFiles
  .filter((f) => !f.endsWith('kustomization.yaml'))
  .flatMap((file) => parseFile(file).map((doc) => ({ file, doc })));

function kindOf(m: Manifest): string {
  return `${String(m.doc['apiVersion'])}/${String(m.doc['kind'])}`;
}

function one(kind: string, name?: string): Obj {
  const found = resources.filter(
    (m) => kindOf(m) === kind && (name === undefined || at(m.doc, 'metadata', 'name') === name),
  );
  assert.equal(found.length, 1, `exactly one ${kind} ${name ?? ''}`);
  const [first] = found;
  assert.ok(first);
  return first.doc;
}

interface Model {
  validate(): void;
}
type ModelClass = new (data: never) => Model;

/** Every built-in kind in manifests/, with its official schema (kubernetes-models). */
const MODELS: ReadonlyMap<string, ModelClass> = new Map<string, ModelClass>([
  ['v1/Namespace', Namespace],
  ['v1/ServiceAccount', ServiceAccount],
  ['v1/Service', Service],
  ['apps/v1/Deployment', Deployment],
  ['policy/v1/PodDisruptionBudget', PodDisruptionBudget],
  ['networking.k8s.io/v1/NetworkPolicy', NetworkPolicy],
  ['rbac.authorization.k8s.io/v1/ClusterRole', ClusterRole],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', ClusterRoleBinding],
  ['rbac.authorization.k8s.io/v1/Role', Role],
  ['rbac.authorization.k8s.io/v1/RoleBinding', RoleBinding],
  ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', MutatingWebhookConfiguration],
  [
    'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
    ValidatingWebhookConfiguration,
  ],
  ['apiextensions.k8s.io/v1/CustomResourceDefinition', CustomResourceDefinition],
]);
/**
 * Kinds that kubernetes-models has no schema for: cert-manager's and the Prometheus Operator's
 * CRDs (manifests/cert-manager, manifests/monitoring; test/monitoring checks the latter).
 */
const EXTERNAL = new Set([
  'cert-manager.io/v1/Issuer',
  'cert-manager.io/v1/Certificate',
  'monitoring.coreos.com/v1/ServiceMonitor',
  'monitoring.coreos.com/v1/PodMonitor',
  'monitoring.coreos.com/v1/PrometheusRule',
]);

describe('manifests/', () => {
  it('parses every YAML file, each document a named object', () => {
    assert.ok(resources.length >= 10);
    for (const { file, doc } of resources) {
      assert.equal(typeof doc['apiVersion'], 'string', file);
      assert.equal(typeof doc['kind'], 'string', file);
      assert.match(String(at(doc, 'metadata', 'name')), /^[a-z0-9.-]+$/, file);
    }
  });

  it('validates every built-in kind against the official Kubernetes schema', () => {
    for (const m of resources) {
      const kind = kindOf(m);
      const Model = MODELS.get(kind);
      if (Model === undefined) {
        assert.ok(EXTERNAL.has(kind), `${m.file}: no schema for ${kind}`);
        continue;
      }
      assert.doesNotThrow(
        () => {
          new Model(m.doc as never).validate();
        },
        `${relative(ROOT, m.file)} ${kind}`,
      );
    }
  });

  it('has each kustomization list every file beside it, and only files that exist', () => {
    for (const k of kustomizations) {
      const dir = dirname(k);
      const [doc] = parseFile(k);
      // A Component (components/) patches what an overlay includes; it lists no resources.
      if (isObj(doc) && doc['kind'] === 'Component') continue;
      const listed = list(doc, 'resources').map(String);
      // Files in this directory tree, minus those of nested kustomizations.
      const nested = kustomizations.filter((o) => o !== k && o.startsWith(dir)).map(dirname);
      const owned = yamlFiles
        .filter((f) => f.startsWith(`${dir}/`) && f !== k)
        .filter((f) => !nested.some((n) => f.startsWith(`${n}/`)));
      const listedFiles = listed.filter((r) => /\.ya?ml$/.test(r)).map((r) => resolve(dir, r));
      assert.deepEqual(listedFiles.sort(), owned.sort(), relative(ROOT, k));
      for (const r of listed.filter((e) => !/\.ya?ml$/.test(e))) {
        assert.ok(existsSync(join(resolve(dir, r), 'kustomization.yaml')), `${k}: ${r}`);
      }
    }
    const [top] = parseFile(join(MANIFESTS, 'kustomization.yaml'));
    assert.deepEqual(at(top, 'resources'), ['base', 'certificates']);
    const [base] = parseFile(join(MANIFESTS, 'base', 'kustomization.yaml'));
    assert.equal(at(base, 'namespace'), NAMESPACE);
  });

  it('puts every namespaced object in the namespace', () => {
    for (const m of resources) {
      if (['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(String(m.doc['kind']))) {
        continue;
      }
      if (String(m.doc['kind']).endsWith('WebhookConfiguration')) continue;
      if (m.doc['kind'] === 'CustomResourceDefinition') continue;
      assert.equal(at(m.doc, 'metadata', 'namespace'), NAMESPACE, `${m.file} ${kindOf(m)}`);
    }
  });

  it('tags the image with the package version', () => {
    const pkg: unknown = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const version = String(at(pkg, 'version'));
    const [base] = parseFile(join(MANIFESTS, 'base', 'kustomization.yaml'));
    assert.deepEqual(at(base, 'images'), [{ name: 'sidecarset', newTag: version }]);
    const container = obj(one('apps/v1/Deployment'), 'spec', 'template', 'spec', 'containers', 0);
    assert.equal(container['image'], `sidecarset:${version}`);
  });
});

describe('the Deployment', () => {
  const deployment = one('apps/v1/Deployment');
  const podSpec = obj(deployment, 'spec', 'template', 'spec');
  const podLabels = obj(deployment, 'spec', 'template', 'metadata', 'labels');
  const selector = obj(deployment, 'spec', 'selector', 'matchLabels');
  const [container] = objs(podSpec, 'containers');
  assert.ok(container);
  const env = new Map(objs(container, 'env').map((e) => [String(e['name']), e['value']]));

  it('runs two replicas spread over nodes, with a budget of one disruption', () => {
    assert.equal(at(deployment, 'spec', 'replicas'), 2);
    assert.equal(at(deployment, 'spec', 'strategy', 'rollingUpdate', 'maxUnavailable'), 0);
    for (const [key, value] of Object.entries(selector)) assert.equal(podLabels[key], value);
    const [term] = objs(
      podSpec,
      'affinity',
      'podAntiAffinity',
      'preferredDuringSchedulingIgnoredDuringExecution',
    );
    assert.equal(at(term, 'podAffinityTerm', 'topologyKey'), 'kubernetes.io/hostname');
    assert.deepEqual(at(term, 'podAffinityTerm', 'labelSelector', 'matchLabels'), selector);
    const pdb = one('policy/v1/PodDisruptionBudget');
    // maxUnavailable: a drain of the only replica's node is not blocked (minAvailable 1 would be).
    assert.equal(at(pdb, 'spec', 'maxUnavailable'), 1);
    assert.ok(!('minAvailable' in obj(pdb, 'spec')));
    assert.deepEqual(at(pdb, 'spec', 'selector', 'matchLabels'), selector);
  });

  it('is locked down: non-root, read-only root, no capabilities, RuntimeDefault seccomp', () => {
    assert.equal(at(podSpec, 'securityContext', 'runAsNonRoot'), true);
    assert.equal(at(podSpec, 'securityContext', 'seccompProfile', 'type'), 'RuntimeDefault');
    const uid = at(podSpec, 'securityContext', 'runAsUser');
    assert.ok(typeof uid === 'number' && uid > 0);
    const sc = obj(container, 'securityContext');
    assert.equal(sc['runAsNonRoot'], true);
    assert.equal(sc['readOnlyRootFilesystem'], true);
    assert.equal(sc['allowPrivilegeEscalation'], false);
    assert.deepEqual(at(sc, 'capabilities', 'drop'), ['ALL']);
    assert.equal(at(sc, 'seccompProfile', 'type'), 'RuntimeDefault');
    assert.equal(sc['privileged'], undefined);
    assert.equal(podSpec['hostNetwork'], undefined);
    assert.equal(podSpec['automountServiceAccountToken'], true);
    assert.equal(podSpec['serviceAccountName'], at(one('v1/ServiceAccount'), 'metadata', 'name'));
    const ns = one('v1/Namespace');
    assert.equal(at(ns, 'metadata', 'labels', 'pod-security.kubernetes.io/enforce'), 'restricted');
  });

  it('sets resources', () => {
    assert.ok(at(container, 'resources', 'requests', 'cpu'));
    assert.ok(at(container, 'resources', 'requests', 'memory'));
    assert.ok(at(container, 'resources', 'limits', 'memory'));
  });

  it('serves on 9443 with the Secret-mounted certificate, metrics on 8080', () => {
    const ports = new Map(objs(container, 'ports').map((p) => [p['name'], p['containerPort']]));
    assert.deepEqual(
      [...ports],
      [
        ['webhook', 9443],
        ['metrics', 8080],
      ],
    );
    assert.equal(env.get('SIDECARSET_PORT'), '9443');
    assert.equal(env.get('SIDECARSET_METRICS_PORT'), '8080');
    assert.equal(env.has('SIDECARSET_SIDECARSETS'), false, 'cluster mode');
    const [mount] = objs(container, 'volumeMounts');
    assert.ok(mount);
    assert.equal(mount['readOnly'], true);
    const dir = String(mount['mountPath']);
    assert.equal(env.get('SIDECARSET_CERT'), `${dir}/tls.crt`);
    assert.equal(env.get('SIDECARSET_KEY'), `${dir}/tls.key`);
    const volume = objs(podSpec, 'volumes').find((v) => v['name'] === mount['name']);
    assert.equal(at(volume, 'secret', 'secretName'), SECRET);
    assert.equal(at(volume, 'secret', 'defaultMode'), 0o440);
  });

  it('probes /healthz and /readyz over HTTPS on the webhook port', () => {
    for (const [probe, path] of [
      ['startupProbe', ENDPOINTS.healthz],
      ['livenessProbe', ENDPOINTS.healthz],
      ['readinessProbe', ENDPOINTS.readyz],
    ] as const) {
      assert.deepEqual(at(container, probe, 'httpGet'), { path, port: 'webhook', scheme: 'HTTPS' });
    }
  });

  it('is reached through the Service: 443 to the webhook port, 8080 to metrics', () => {
    const service = one('v1/Service', 'sidecarset-webhook');
    assert.deepEqual(at(service, 'spec', 'selector'), selector);
    assert.ok(!('publishNotReadyAddresses' in obj(service, 'spec')), 'ready pods only');
    const ports = objs(service, 'spec', 'ports').map((p) => [p['port'], p['targetPort']]);
    assert.deepEqual(ports, [
      [443, 'webhook'],
      [8080, 'metrics'],
    ]);
    const annotations = obj(deployment, 'spec', 'template', 'metadata', 'annotations');
    assert.equal(annotations['prometheus.io/port'], '8080');
    assert.equal(annotations['prometheus.io/path'], ENDPOINTS.metrics);
  });

  it('is converted for through a Service that keeps not-ready pods (docs/adr/0036)', () => {
    const service = one('v1/Service', 'sidecarset-conversion');
    assert.deepEqual(at(service, 'spec', 'selector'), selector);
    assert.equal(at(service, 'spec', 'publishNotReadyAddresses'), true);
    const ports = objs(service, 'spec', 'ports').map((p) => [p['port'], p['targetPort']]);
    assert.deepEqual(ports, [[443, 'webhook']]);
  });
});

describe('the NetworkPolicy', () => {
  const policy = one('networking.k8s.io/v1/NetworkPolicy');
  const deployment = one('apps/v1/Deployment');
  const containerPorts = objs(deployment, 'spec', 'template', 'spec', 'containers', 0, 'ports');

  it("selects the webhook's pods and restricts ingress only", () => {
    assert.deepEqual(
      at(policy, 'spec', 'podSelector', 'matchLabels'),
      at(deployment, 'spec', 'selector', 'matchLabels'),
    );
    assert.deepEqual(at(policy, 'spec', 'policyTypes'), ['Ingress']);
  });

  it('lets anyone reach the webhook port, and only the monitoring namespace the metrics port', () => {
    const rules = objs(policy, 'spec', 'ingress');
    const byPort = new Map(
      rules.flatMap((rule) => objs(rule, 'ports').map((p) => [p['port'], rule] as const)),
    );
    // Named ports: they must be the container's, so that a renumbering cannot open or close one.
    assert.deepEqual([...byPort.keys()].sort(), containerPorts.map((p) => p['name']).sort());
    for (const rule of rules) {
      for (const p of objs(rule, 'ports')) assert.equal(p['protocol'], 'TCP');
    }
    // The API server's source addresses differ per cluster: no `from` on the webhook port.
    assert.equal(byPort.get('webhook')?.['from'], undefined);
    assert.deepEqual(at(byPort.get('metrics'), 'from'), [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
  });
});

describe('RBAC', () => {
  it('grants exactly what the webhook and the controller use, to the ServiceAccount', () => {
    const role = one('rbac.authorization.k8s.io/v1/ClusterRole', 'sidecarset-webhook');
    const rules = objs(role, 'rules').map((r) => ({
      apiGroups: r['apiGroups'],
      resources: r['resources'],
      ...(r['resourceNames'] === undefined ? {} : { resourceNames: r['resourceNames'] }),
      verbs: r['verbs'],
    }));
    assert.deepEqual(rules, [
      { apiGroups: ['apps.kruise.io'], resources: ['sidecarsets'], verbs: ['list', 'watch'] },
      { apiGroups: ['apps.kruise.io'], resources: ['sidecarsets/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['pods/resize'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['sidecarset-mutating-webhook'],
        verbs: ['get', 'patch'],
      },
    ]);
    const binding = one('rbac.authorization.k8s.io/v1/ClusterRoleBinding', 'sidecarset-webhook');
    const lease = one('rbac.authorization.k8s.io/v1/Role', 'sidecarset-leader-election');
    assert.deepEqual(objs(lease, 'rules'), [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['sidecarset-controller'],
        verbs: ['get', 'update'],
      },
    ]);
    const leaseBinding = one(
      'rbac.authorization.k8s.io/v1/RoleBinding',
      'sidecarset-leader-election',
    );
    assert.equal(at(leaseBinding, 'roleRef', 'name'), at(lease, 'metadata', 'name'));
    const revisions = one('rbac.authorization.k8s.io/v1/Role', 'sidecarset-revisions');
    assert.deepEqual(objs(revisions, 'rules'), [
      {
        apiGroups: ['apps'],
        resources: ['controllerrevisions'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
      },
    ]);
    const revisionsBinding = one(
      'rbac.authorization.k8s.io/v1/RoleBinding',
      'sidecarset-revisions',
    );
    assert.deepEqual(at(revisionsBinding, 'roleRef'), {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: at(revisions, 'metadata', 'name'),
    });
    assert.deepEqual(at(revisionsBinding, 'subjects'), at(binding, 'subjects'));
    assert.deepEqual(at(binding, 'roleRef'), {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: at(role, 'metadata', 'name'),
    });
    const sa = one('v1/ServiceAccount');
    assert.deepEqual(at(leaseBinding, 'subjects'), at(binding, 'subjects'));
    assert.deepEqual(at(binding, 'subjects'), [
      { kind: 'ServiceAccount', name: at(sa, 'metadata', 'name'), namespace: NAMESPACE },
    ]);
  });

  it('lets the self-managed certificate use one Secret, our two webhook configurations and the CRD', () => {
    const role = one('rbac.authorization.k8s.io/v1/Role', 'sidecarset-webhook-certificates');
    assert.deepEqual(objs(role, 'rules'), [
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: [DEFAULT_CERT_SECRET],
        verbs: ['get', 'update'],
      },
    ]);
    const clusterRole = one(
      'rbac.authorization.k8s.io/v1/ClusterRole',
      'sidecarset-webhook-certificates',
    );
    assert.deepEqual(
      objs(clusterRole, 'rules'),
      DEFAULT_WEBHOOK_CONFIGURATIONS.map((c) =>
        c.kind === 'crd'
          ? {
              apiGroups: ['apiextensions.k8s.io'],
              resources: ['customresourcedefinitions'],
              resourceNames: [c.name],
              verbs: ['get', 'patch'],
            }
          : {
              apiGroups: ['admissionregistration.k8s.io'],
              resources: [`${c.kind}webhookconfigurations`],
              resourceNames: [c.name],
              verbs: ['get', 'patch'],
            },
      ),
    );
    assert.deepEqual(
      [
        ...['Mutating', 'Validating'].map((k) =>
          at(one(`admissionregistration.k8s.io/v1/${k}WebhookConfiguration`), 'metadata', 'name'),
        ),
        at(one('apiextensions.k8s.io/v1/CustomResourceDefinition'), 'metadata', 'name'),
      ],
      DEFAULT_WEBHOOK_CONFIGURATIONS.map((c) => c.name),
    );
    const sa = one('v1/ServiceAccount');
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      const binding = one(
        `rbac.authorization.k8s.io/v1/${kind}`,
        'sidecarset-webhook-certificates',
      );
      assert.deepEqual(at(binding, 'roleRef', 'name'), 'sidecarset-webhook-certificates');
      assert.deepEqual(at(binding, 'subjects'), [
        { kind: 'ServiceAccount', name: at(sa, 'metadata', 'name'), namespace: NAMESPACE },
      ]);
    }
  });
});

describe('webhook configurations', () => {
  const mutating = one('admissionregistration.k8s.io/v1/MutatingWebhookConfiguration');
  const validating = one('admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration');
  const service = one('v1/Service', 'sidecarset-webhook');
  const all = [...objs(mutating, 'webhooks'), ...objs(validating, 'webhooks')];
  const byPath = new Map(all.map((w) => [at(w, 'clientConfig', 'service', 'path'), w]));

  it('registers exactly the three admission endpoints', () => {
    assert.deepEqual(
      [...byPath.keys()].sort(),
      [ENDPOINTS.mutatePods, ENDPOINTS.mutateSidecarSets, ENDPOINTS.validateSidecarSets].sort(),
    );
    assert.equal(all.length, 3);
  });

  it('calls the Service on 443 with the caBundle placeholder, v1 and v1beta1, no side effects', () => {
    for (const w of all) {
      assert.deepEqual(obj(w, 'clientConfig', 'service'), {
        name: at(service, 'metadata', 'name'),
        namespace: NAMESPACE,
        path: at(w, 'clientConfig', 'service', 'path'),
        port: 443,
      });
      assert.equal(at(w, 'clientConfig', 'caBundle'), PLACEHOLDER);
      assert.equal(Buffer.from(PLACEHOLDER, 'base64').toString(), 'CA_BUNDLE_PLACEHOLDER');
      assert.deepEqual(at(w, 'admissionReviewVersions'), ['v1', 'v1beta1']);
      assert.equal(at(w, 'sideEffects'), 'None');
      assert.equal(at(w, 'matchPolicy'), 'Equivalent');
      assert.equal(at(w, 'timeoutSeconds'), 5);
    }
    for (const w of objs(mutating, 'webhooks')) assert.equal(w['reinvocationPolicy'], 'IfNeeded');
  });

  it('sends pod CREATE to /mutate-pods, failing open, never for system namespaces', () => {
    const w = byPath.get(ENDPOINTS.mutatePods);
    assert.deepEqual(at(w, 'rules'), [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['CREATE'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ]);
    assert.equal(at(w, 'failurePolicy'), 'Ignore');
    // ADR 0004's patch to choose Fail addresses /webhooks/0.
    assert.equal(objs(mutating, 'webhooks')[0], w);
    const [byName, byLabel] = objs(w, 'namespaceSelector', 'matchExpressions');
    assert.deepEqual(byName, {
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['kube-system', 'kube-public', 'kube-node-lease', NAMESPACE],
    });
    // The webhook's own namespace carries the opt-out label too.
    const labels = obj(one('v1/Namespace'), 'metadata', 'labels');
    assert.ok(byLabel);
    assert.equal(byLabel['operator'], 'NotIn');
    assert.deepEqual(byLabel['values'], [labels[String(byLabel['key'])]]);
    assert.equal(at(one('v1/Namespace'), 'metadata', 'name'), NAMESPACE);
  });

  it('sends SidecarSet CREATE/UPDATE to the mutating and validating endpoints, failing closed', () => {
    for (const path of [ENDPOINTS.mutateSidecarSets, ENDPOINTS.validateSidecarSets]) {
      const w = byPath.get(path);
      assert.deepEqual(at(w, 'rules'), [
        {
          apiGroups: ['apps.kruise.io'],
          apiVersions: ['v1alpha1', 'v1beta1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['sidecarsets'],
          scope: 'Cluster',
        },
      ]);
      assert.equal(at(w, 'failurePolicy'), 'Fail');
    }
    assert.ok(
      objs(validating, 'webhooks').includes(obj(byPath.get(ENDPOINTS.validateSidecarSets))),
    );
  });

  it('has the cert-manager overlay inject the CA of the Certificate the Deployment mounts', () => {
    const [overlay] = parseFile(join(MANIFESTS, 'cert-manager', 'kustomization.yaml'));
    assert.ok(list(overlay, 'resources').includes('../base'));
    const patched = objs(overlay, 'patches').flatMap((p) => parseText(String(p['patch']), 'patch'));
    const cert = one('cert-manager.io/v1/Certificate', SECRET);
    for (const config of [mutating, validating]) {
      const patch = patched.find(
        (p) =>
          p['kind'] === config['kind'] &&
          at(p, 'metadata', 'name') === at(config, 'metadata', 'name'),
      );
      assert.equal(
        at(patch, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from'),
        `${NAMESPACE}/${String(at(cert, 'metadata', 'name'))}`,
      );
    }
    assert.equal(at(cert, 'spec', 'secretName'), SECRET);
    // Both Services the API server calls: admission, and conversion (docs/adr/0036).
    const conversion = one('v1/Service', 'sidecarset-conversion');
    const names = (svc: string): string[] => [
      svc,
      `${svc}.${NAMESPACE}`,
      `${svc}.${NAMESPACE}.svc`,
      `${svc}.${NAMESPACE}.svc.cluster.local`,
    ];
    assert.deepEqual(at(cert, 'spec', 'dnsNames'), [
      ...names(String(at(service, 'metadata', 'name'))),
      ...names(String(at(conversion, 'metadata', 'name'))),
    ]);
    const issuer = one('cert-manager.io/v1/Issuer', String(at(cert, 'spec', 'issuerRef', 'name')));
    const ca = one(
      'cert-manager.io/v1/Certificate',
      String(at(issuer, 'spec', 'ca', 'secretName')),
    );
    assert.equal(at(ca, 'spec', 'isCA'), true);
    one('cert-manager.io/v1/Issuer', String(at(ca, 'spec', 'issuerRef', 'name')));
  });
});

describe('the SidecarSet CRD', () => {
  const crd = one('apiextensions.k8s.io/v1/CustomResourceDefinition', 'sidecarsets.apps.kruise.io');
  const versions = objs(crd, 'spec', 'versions');
  const versionNamed = (name: string): Obj => {
    const found = versions.find((v) => v['name'] === name);
    assert.ok(found, name);
    return found;
  };
  const schemaOf = (name: string): Obj => obj(versionNamed(name), 'schema', 'openAPIV3Schema');
  const schema = schemaOf('v1alpha1');

  it("is cluster-scoped, serves v1alpha1 and v1beta1, stores v1beta1, OpenKruise's printer columns and the rollout pause", () => {
    assert.equal(at(crd, 'spec', 'group'), 'apps.kruise.io');
    assert.equal(at(crd, 'spec', 'scope'), 'Cluster');
    assert.deepEqual(at(crd, 'spec', 'names'), {
      kind: 'SidecarSet',
      listKind: 'SidecarSetList',
      plural: 'sidecarsets',
      singular: 'sidecarset',
    });
    assert.deepEqual(
      versions.map((v) => [v['name'], v['served'], v['storage']]),
      [
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ],
    );
    for (const version of versions) {
      assert.deepEqual(at(version, 'subresources'), { status: {} });
      const columns = objs(version, 'additionalPrinterColumns').map((c) => [
        c['name'],
        c['jsonPath'],
        c['type'],
      ]);
      assert.deepEqual(columns, [
        ['MATCHED', '.status.matchedPods', 'integer'],
        ['UPDATED', '.status.updatedPods', 'integer'],
        ['READY', '.status.readyPods', 'integer'],
        ['PAUSED', '.status.conditions[?(@.type=="RolloutPaused")].status', 'string'],
        ['REASON', '.status.conditions[?(@.type=="RolloutPaused")].reason', 'string'],
        ['AGE', '.metadata.creationTimestamp', 'date'],
      ]);
    }
    // Both versions carry the same status, whatever fields it gets.
    assert.deepEqual(
      at(schemaOf('v1alpha1'), 'properties', 'status'),
      at(schemaOf('v1beta1'), 'properties', 'status'),
    );
  });

  it('converts through the webhook at the conversion Service /convert (ConversionReview v1)', () => {
    assert.deepEqual(at(crd, 'spec', 'conversion'), {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          service: {
            name: 'sidecarset-conversion',
            namespace: NAMESPACE,
            path: '/convert',
            port: 443,
          },
        },
      },
    });
  });

  it('is up to date with scripts/gen-crd.ts (node --import tsx scripts/gen-crd.ts)', async () => {
    assert.deepEqual(crd, buildCrd());
    const file = join(MANIFESTS, 'base', 'crd', 'apps.kruise.io_sidecarsets.yaml');
    assert.equal(readFileSync(file, 'utf8'), await renderCrd());
  });

  it('has a structural schema in each version', () => {
    for (const name of ['v1alpha1', 'v1beta1'])
      assert.deepEqual(structuralErrors(schemaOf(name)), []);
  });

  it('types the status fields', () => {
    const status = obj(schema, 'properties', 'status', 'properties');
    for (const field of ['matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods']) {
      assert.deepEqual(
        [at(status, field, 'type'), at(status, field, 'format')],
        ['integer', 'int32'],
      );
    }
    assert.equal(at(status, 'observedGeneration', 'format'), 'int64');
    assert.equal(at(status, 'latestRevision', 'type'), 'string');
  });

  const validate = compileCrdSchema(schema);
  const validateBeta = compileCrdSchema(schemaOf('v1beta1'));
  const examples = walk(join(ROOT, 'examples'))
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((file) => parseFile(file).map((doc) => ({ file, doc })))
    .filter((m) => m.doc['kind'] === 'SidecarSet');

  it('accepts every example SidecarSet without pruning a field', () => {
    assert.ok(examples.length >= 4, `found ${examples.length} examples`);
    const byVersion = new Map([
      ['apps.kruise.io/v1alpha1', validate],
      ['apps.kruise.io/v1beta1', validateBeta],
    ]);
    assert.ok(examples.some((e) => at(e.doc, 'apiVersion') === 'apps.kruise.io/v1beta1'));
    for (const { file, doc } of examples) {
      const check = byVersion.get(String(at(doc, 'apiVersion')));
      assert.ok(check, `${file}: apiVersion`);
      assert.equal(obj(doc, 'metadata')['namespace'], undefined, `${file}: cluster-scoped`);
      assert.ok(check(doc), `${file}: ${JSON.stringify(check.errors)}`);
    }
  });

  it('accepts the whole v1alpha1 field set', () => {
    const full = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'full', labels: { 'apps.kruise.io/sidecarset-custom-version': 'v1' } },
      spec: {
        selector: {
          matchLabels: { app: 'a' },
          matchExpressions: [{ key: 'k', operator: 'Exists' }],
        },
        namespace: 'ns',
        namespaceSelector: { matchLabels: { team: 'a' } },
        initContainers: [
          {
            name: 'init',
            image: 'busybox',
            restartPolicy: 'Always',
            podInjectPolicy: 'AfterAppContainer',
          },
        ],
        containers: [
          {
            name: 'proxy',
            image: 'envoy:1',
            command: ['envoy'],
            ports: [{ containerPort: 15001 }],
            env: [{ name: 'A', value: 'b' }],
            resources: { limits: { cpu: '1' } },
            podInjectPolicy: 'BeforeAppContainer',
            upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
            shareVolumePolicy: { type: 'enabled' },
            shareVolumeDevicePolicy: { type: 'disabled' },
            transferEnv: [
              { sourceContainerName: 'app', envName: 'TZ', envNames: ['LANG'] },
              {
                sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['c']" } },
                envName: 'X',
              },
            ],
          },
          {
            name: 'sized',
            image: 'x:1',
            resourcesPolicy: {
              targetContainersMode: 'sum',
              targetContainersNameRegex: '.*',
              resourcesExpr: { limits: { cpu: 'cpu*50%' }, requests: { memory: 'memory' } },
            },
          },
        ],
        volumes: [
          { name: 'v', emptyDir: {} },
          { name: 'c', configMap: { name: 'cm' } },
        ],
        updateStrategy: {
          type: 'RollingUpdate',
          paused: false,
          selector: { matchLabels: { canary: 'true' } },
          partition: '10%',
          maxUnavailable: 2,
          priorityStrategy: {
            weightPriority: [{ weight: 50, matchSelector: { matchLabels: { p: 'high' } } }],
            orderPriority: [{ orderedKey: 'prio' }],
          },
          scatterStrategy: [{ key: 'app', value: 'a' }, { key: 'zone' }],
        },
        injectionStrategy: {
          paused: false,
          revision: { customVersion: 'v1', revisionName: 'r', policy: 'Partial' },
        },
        imagePullSecrets: [{ name: 'regcred' }],
        revisionHistoryLimit: 10,
        patchPodMetadata: [{ annotations: { a: 'b' }, patchPolicy: 'MergePatchJson' }],
      },
      status: {
        observedGeneration: 3,
        matchedPods: 1,
        updatedPods: 1,
        readyPods: 1,
        updatedReadyPods: 1,
        latestRevision: 'full-abc',
        collisionCount: 0,
      },
    };
    assert.ok(validate(full), JSON.stringify(validate.errors));
  });

  it('rejects what the API server would reject or prune', () => {
    const base = (spec: Obj): Obj => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'x' },
      spec: { selector: { matchLabels: { a: 'b' } }, ...spec },
    });
    const bad: readonly Obj[] = [
      base({ unknownField: 1 }),
      base({ updateStrategy: { type: 'Sometimes' } }),
      base({ updateStrategy: { maxUnavailable: true } }),
      base({ containers: [{ image: 'no-name' }] }),
      base({ containers: [{ name: 'c', podInjectPolicy: 'Middle' }] }),
      base({ revisionHistoryLimit: 'ten' }),
      base({ selector: { matchLabels: { a: 1 } } }),
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'x' } },
    ];
    for (const doc of bad) assert.equal(validate(doc), false, JSON.stringify(doc));
  });

  it('v1beta1: spec.customVersion, and no spec.namespace', () => {
    const doc = (spec: Obj): Obj => ({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: 'x' },
      spec: { selector: { matchLabels: { a: 'b' } }, ...spec },
    });
    assert.ok(validateBeta(doc({ customVersion: 'v2' })), JSON.stringify(validateBeta.errors));
    assert.equal(validateBeta(doc({ namespace: 'ns' })), false);
    assert.equal(
      validate({ ...doc({ customVersion: 'v2' }), apiVersion: 'apps.kruise.io/v1alpha1' }),
      false,
    );
  });
});

describe('kustomize build (when kubectl is installed)', () => {
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  const skip = kubectl.status === 0 ? false : 'kubectl is not installed';

  function build(dir: string): Obj[] {
    const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return parseText(r.stdout, `kubectl kustomize ${dir}`);
  }

  it('components/pod-webhook-fail makes only the pod webhook fail closed', { skip }, () => {
    const overlay = mkdtempSync(join(tmpdir(), 'overlay-'));
    try {
      const base = relative(overlay, MANIFESTS);
      writeFileSync(
        join(overlay, 'kustomization.yaml'),
        `resources: [${base}]\ncomponents: [${base}/components/pod-webhook-fail]\n`,
      );
      const policies = build(overlay)
        .filter((d) => String(d['kind']).endsWith('WebhookConfiguration'))
        .flatMap((c) => objs(c, 'webhooks'))
        .map((w) => [w['name'], w['failurePolicy']]);
      assert.deepEqual(policies.sort(), [
        ['mpod.sidecarset.kruise.io', 'Fail'],
        ['msidecarset.sidecarset.kruise.io', 'Fail'],
        ['vsidecarset.sidecarset.kruise.io', 'Fail'],
      ]);
      const defaults = build(MANIFESTS).flatMap((d) =>
        d['kind'] === 'MutatingWebhookConfiguration' ? objs(d, 'webhooks') : [],
      );
      assert.equal(
        defaults.find((w) => w['name'] === 'mpod.sidecarset.kruise.io')?.['failurePolicy'],
        'Ignore',
      );
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  it('builds manifests/ into every resource of base/', { skip }, () => {
    const built = build(MANIFESTS);
    const kinds = built.map((d) => `${String(d['kind'])}/${String(at(d, 'metadata', 'name'))}`);
    const expected = resources
      .filter((m) => ['base', 'certificates'].some((d) => m.file.startsWith(join(MANIFESTS, d))))
      .map((m) => `${String(m.doc['kind'])}/${String(at(m.doc, 'metadata', 'name'))}`);
    assert.deepEqual(kinds.sort(), expected.sort());
  });

  it(
    'builds manifests/ for self-managed certificates: no caBundle, no mounted Secret',
    { skip },
    () => {
      const built = build(MANIFESTS);
      const configs = built.filter((d) => String(d['kind']).endsWith('WebhookConfiguration'));
      assert.equal(configs.length, 2);
      for (const c of configs) {
        for (const w of objs(c, 'webhooks')) {
          assert.ok(!('caBundle' in (at(w, 'clientConfig') as Obj)), 'no caBundle');
          assert.equal(at(w, 'clientConfig', 'service', 'name'), 'sidecarset-webhook');
        }
      }
      const crd = built.find((d) => d['kind'] === 'CustomResourceDefinition');
      const conversion = at(crd, 'spec', 'conversion', 'webhook', 'clientConfig') as Obj;
      assert.ok(!('caBundle' in conversion), 'no caBundle on the conversion webhook');
      assert.equal(at(conversion, 'service', 'name'), 'sidecarset-conversion');
      const deployment = built.find((d) => d['kind'] === 'Deployment');
      const podSpec = at(deployment, 'spec', 'template', 'spec');
      const [webhook] = objs(podSpec, 'containers');
      const names = objs(webhook, 'env').map((e) => e['name']);
      assert.ok(
        !names.includes('SIDECARSET_CERT') && !names.includes('SIDECARSET_KEY'),
        String(names),
      );
      assert.deepEqual(objs(webhook, 'volumeMounts'), []);
      assert.deepEqual(objs(podSpec, 'volumes'), []);
    },
  );

  it('builds manifests/cert-manager with the CA injection annotations', { skip }, () => {
    const built = build(join(MANIFESTS, 'cert-manager'));
    const configs = built.filter((d) => String(d['kind']).endsWith('WebhookConfiguration'));
    assert.equal(configs.length, 2);
    for (const c of configs) {
      assert.equal(
        at(c, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from'),
        `${NAMESPACE}/${SECRET}`,
      );
      // No placeholder for a re-apply to write over the injected caBundle.
      for (const w of objs(c, 'webhooks'))
        assert.ok(!('caBundle' in (at(w, 'clientConfig') as Obj)), 'no caBundle');
    }
    assert.equal(
      built.filter((d) => String(d['apiVersion']).startsWith('cert-manager.io')).length,
      4,
    );
  });
});
