/**
 * What a SidecarSet author may do (docs/security.md), on a real API server: the validating
 * webhook's patchPodMetadata allow-list (--patch-pod-metadata-allowlist), and the chart's optional
 * guardrail, a ValidatingAdmissionPolicy refusing privileged, hostPath and host-port sidecars
 * unless the SidecarSet or its namespaces are allowed (charts/sidecarset/templates/guardrail.yaml).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { eventually } from '../support/eventually.js';
import { CHART, helm } from './helm.js';
import type { SidecarsetProcess } from './processes.js';
import { errors, lastWords } from './processes.js';
import { install, useControlPlane } from './support.js';

/** A SidecarSet with one sidecar `agent`; `spec` and `sidecar` add to it. */
function sidecarSet(
  name: string,
  spec: Record<string, unknown> = {},
  sidecar: Record<string, unknown> = {},
): string {
  return stringify({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'agent', image: 'agent:1', ...sidecar }],
      ...spec,
    },
  });
}

const privileged = { securityContext: { privileged: true } };
const hostPath = {
  volumes: [{ name: 'host', hostPath: { path: '/var/log' } }],
};
const hostPort = { ports: [{ containerPort: 9000, hostPort: 9000 }] };

describe('what a SidecarSet author may do, on a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let serve: SidecarsetProcess;

  before(async () => {
    const installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(async () => {
      await serve.stop();
    });
  });

  /** A server-side dry run of `kubectl create`: '' when admitted, else kubectl's error. */
  async function refusal(yaml: string): Promise<string> {
    const created = await plane().kubectl(['create', '--dry-run=server', '-f', '-'], {
      input: yaml,
    });
    return created.code === 0 ? '' : created.stderr;
  }

  it('patchPodMetadata writes only the keys the allow-list names, never bookkeeping keys', async () => {
    const writing = (key: string): string =>
      sidecarSet('patcher', {
        patchPodMetadata: [{ annotations: { [key]: 'enabled' }, patchPolicy: 'Overwrite' }],
      });
    // The e2e webhook allows example.com/ keys (test/support/allow-list.ts).
    assert.equal(await refusal(writing('example.com/tuned')), '');
    assert.match(
      await refusal(writing('other.io/tuned')),
      /sidecarSet patch metadata annotation\(other.io\/tuned\) is not allowed/,
    );
    assert.match(
      await refusal(writing('kruise.io/sidecarset-hash')),
      /the key holds SidecarSet bookkeeping/,
    );
  });

  it('the guardrail refuses privileged, hostPath and host-port sidecars but where it allows them', async () => {
    const rendered = await helm(plane(), [
      'template',
      'sidecarset',
      CHART,
      '--show-only',
      'templates/guardrail.yaml',
      '--set',
      'guardrail.enabled=true',
      '--set',
      'guardrail.allowedSidecarSets={trusted}',
      '--set',
      'guardrail.allowedNamespaces={infra,ops}',
    ]);
    assert.equal(rendered.code, 0, rendered.stderr);
    const applied = await plane().kubectl(['apply', '-f', '-'], { input: rendered.stdout });
    assert.equal(applied.code, 0, applied.stderr);
    // The API server compiles and enforces the policy a moment after it is stored.
    await eventually(
      async () => (await refusal(sidecarSet('probe', {}, privileged))) !== '',
      'the guardrail enforced',
    );

    assert.match(
      await refusal(sidecarSet('root', {}, privileged)),
      /ValidatingAdmissionPolicy 'sidecarset-guardrail'.*SidecarSet root has a privileged sidecar/,
    );
    assert.match(
      await refusal(sidecarSet('logs', hostPath)),
      /SidecarSet logs has a hostPath volume/,
    );
    assert.match(
      await refusal(sidecarSet('port', {}, hostPort)),
      /SidecarSet port has a sidecar on a host port/,
    );
    // A native sidecar (init container) is checked as well.
    assert.match(
      await refusal(
        sidecarSet('native', {
          initContainers: [{ name: 'init', image: 'i:1', restartPolicy: 'Always', ...privileged }],
        }),
      ),
      /SidecarSet native has a privileged sidecar/,
    );
    assert.equal(await refusal(sidecarSet('plain')), '');
    assert.equal(
      await refusal(sidecarSet('unprivileged', {}, { securityContext: { privileged: false } })),
      '',
    );
    // Allowed: by name, or confined to allowed namespaces.
    assert.equal(await refusal(sidecarSet('trusted', hostPath, privileged)), '');
    // spec.namespace is v1alpha1's (OpenKruise before v1.9); the policy sees the request's version.
    const v1alpha1 = (yaml: string): string => yaml.replace('/v1beta1', '/v1alpha1');
    assert.equal(
      await refusal(v1alpha1(sidecarSet('infra-only', { namespace: 'infra' }, privileged))),
      '',
    );
    const byLabel = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } },
    };
    assert.equal(await refusal(sidecarSet('ops-only', byLabel, privileged)), '');
    const byExpression = {
      namespaceSelector: {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['infra', 'ops'] },
        ],
      },
    };
    assert.equal(await refusal(sidecarSet('both', byExpression, privileged)), '');
    // Not confined: one namespace outside the list, or a selector on another label.
    const wider = structuredClone(byExpression);
    wider.namespaceSelector.matchExpressions[0]?.values.push('shop');
    assert.match(await refusal(sidecarSet('wider', wider, privileged)), /privileged sidecar/);
    const other = { namespaceSelector: { matchLabels: { team: 'infra' } } };
    assert.match(await refusal(sidecarSet('team', other, privileged)), /privileged sidecar/);
    assert.match(
      await refusal(v1alpha1(sidecarSet('elsewhere', { namespace: 'shop' }, privileged))),
      /privileged sidecar/,
    );

    const removed = await plane().kubectl(['delete', '-f', '-'], { input: rendered.stdout });
    assert.equal(removed.code, 0, removed.stderr);
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), [], lastWords(serve));
  });
});
