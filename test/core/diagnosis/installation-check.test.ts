/** `sidecarset check`'s verdicts (src/core/diagnosis/installation-check.ts) on plain objects. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import type {
  Crd,
  Deployment,
  InstallationCheck,
  InstallationState,
  Lease,
  Read,
  ReadyzAnswer,
  ServiceEndpoints,
  WebhookConfiguration,
} from '../../../src/core/diagnosis/installation-check.js';
import {
  behind,
  checkInstallation,
  controllerSetup,
  passed,
  readyEndpoints,
  referencedServices,
  urlServers,
} from '../../../src/core/diagnosis/installation-check.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import {
  DEFAULT_CERTIFICATE_TIMES,
  caBundleOf,
  issueBundle,
} from '../../../src/server/cert-plan.js';
import { makeSidecarSet } from '../../support/factories.js';
import {
  crd,
  deployment,
  endpointSlice,
  lease,
  mutatingWebhookConfiguration,
  validatingWebhookConfiguration,
} from '../../support/installation.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const DAY_MS = 24 * 60 * 60 * 1000;
const SERVICE = 'sidecarset-system/sidecarset-webhook';

async function caBundle(issuedAt: Date, caValidityMs: number): Promise<string> {
  const policy = { ...DEFAULT_CERTIFICATE_TIMES, caValidityMs, dnsNames: ['x'], ipAddresses: [] };
  return caBundleOf(await issueBundle(policy, issuedAt));
}

let valid = '';
const bundles = { expired: '', soon: '', future: '' };
before(async () => {
  valid = await caBundle(NOW, 365 * DAY_MS);
  bundles.expired = await caBundle(new Date(NOW.getTime() - 2 * DAY_MS), DAY_MS);
  bundles.soon = await caBundle(NOW, 3 * DAY_MS);
  bundles.future = await caBundle(new Date(NOW.getTime() + 2 * DAY_MS), 365 * DAY_MS);
});

function healthy(caBundleValue = valid): InstallationState {
  return {
    crd: crd(caBundleValue),
    webhookConfigurations: [
      {
        kind: 'MutatingWebhookConfiguration',
        name: 'sidecarset-mutating-webhook',
        object: mutatingWebhookConfiguration(caBundleValue),
      },
      {
        kind: 'ValidatingWebhookConfiguration',
        name: 'sidecarset-validating-webhook',
        object: validatingWebhookConfiguration(caBundleValue),
      },
    ],
    services: new Map([[SERVICE, { endpointSlices: [endpointSlice([true, true])] }]]),
    urlServers: new Map(),
    deployment: {
      namespace: 'sidecarset-system',
      name: 'sidecarset-webhook',
      object: deployment(2, 2),
    },
    lease: {
      namespace: 'sidecarset-system',
      name: 'sidecarset-controller',
      object: lease('pod-a', new Date(NOW.getTime() - 3000)),
    },
    sidecarSets: [],
  };
}

const WEBHOOK_URL = 'https://127.0.0.1:9443';

/**
 * The local install of docs/local-cluster.md: every webhook calls WEBHOOK_URL, the Deployment has
 * no ready replica (its image is not on the node), the Service has no endpoint.
 */
function atUrl(answers: ReadonlyMap<string, ReadyzAnswer>): InstallationState {
  const state = healthy();
  const [mutating, validating] = state.webhookConfigurations;
  assert.ok(mutating && validating);
  return {
    ...state,
    crd: crd(valid, WEBHOOK_URL),
    webhookConfigurations: [
      { ...mutating, object: mutatingWebhookConfiguration(valid, WEBHOOK_URL) },
      { ...validating, object: validatingWebhookConfiguration(valid, WEBHOOK_URL) },
    ],
    services: new Map(),
    urlServers: answers,
    deployment: { ...state.deployment, object: deployment(2, 0) },
  };
}

/** One mutating configuration holding `webhooks`, the rest healthy. */
function config(webhooks: NonNullable<WebhookConfiguration['webhooks']>): InstallationState {
  return {
    ...healthy(),
    webhookConfigurations: [
      { kind: 'MutatingWebhookConfiguration', name: 'm', object: { webhooks } },
    ],
  };
}

function check(state: InstallationState, name: string): InstallationCheck {
  const found = checkInstallation(state, NOW).find((c) => c.name === name);
  assert.ok(found, `no check ${name}`);
  return found;
}

/** The state and message of the check called `name`. */
function verdict(state: InstallationState, name: string): [string, string] {
  const found = check(state, name);
  return [found.state, found.message];
}

const CRD = 'CustomResourceDefinition sidecarsets.apps.kruise.io';
const POD_WEBHOOK = 'webhook mpod.sidecarset.kruise.io';

describe('checkInstallation', () => {
  it('a healthy installation passes, with the pod webhook failing open as a warning', () => {
    const checks = checkInstallation(healthy(), NOW);
    assert.equal(passed(checks), true);
    assert.deepEqual(
      checks.filter((c) => c.state !== 'ok').map((c) => [c.name, c.state]),
      [[`${POD_WEBHOOK}: failurePolicy`, 'warning']],
    );
    assert.deepEqual(
      checks.map((c) => c.name),
      [
        CRD,
        'CRD conversion webhook: caBundle',
        'CRD conversion webhook: service',
        `${POD_WEBHOOK}: caBundle`,
        `${POD_WEBHOOK}: service`,
        `${POD_WEBHOOK}: failurePolicy`,
        'webhook msidecarset.sidecarset.kruise.io: caBundle',
        'webhook msidecarset.sidecarset.kruise.io: service',
        'webhook msidecarset.sidecarset.kruise.io: failurePolicy',
        'webhook vsidecarset.sidecarset.kruise.io: caBundle',
        'webhook vsidecarset.sidecarset.kruise.io: service',
        'webhook vsidecarset.sidecarset.kruise.io: failurePolicy',
        'Deployment sidecarset-system/sidecarset-webhook',
        'Lease sidecarset-system/sidecarset-controller',
        'SidecarSets',
      ],
    );
    assert.deepEqual(verdict(healthy(), CRD), [
      'ok',
      'Established; serves v1beta1 (stored) and v1alpha1',
    ]);
    assert.match(check(healthy(), `${POD_WEBHOOK}: caBundle`).message, /valid until 2027-12-01/);
    assert.deepEqual(verdict(healthy(), `${POD_WEBHOOK}: service`), [
      'ok',
      `${SERVICE} has 2 ready endpoints`,
    ]);
    assert.match(
      check(healthy(), `${POD_WEBHOOK}: failurePolicy`).fix ?? '',
      /docs\/adr\/0004-webhook-failure-policy.md/,
    );
  });

  it('the CRD: missing, unreadable, not Established, wrong versions, no conversion webhook', () => {
    const state = healthy();
    const withCrd = (value: Read<Crd>): InstallationState => ({ ...state, crd: value });
    assert.deepEqual(verdict(withCrd(undefined), CRD), ['failed', 'not found']);
    assert.match(check(withCrd(undefined), CRD).fix ?? '', /kubectl apply -k manifests/);
    assert.deepEqual(verdict(withCrd({ unreadable: 'forbidden' }), CRD), [
      'failed',
      'cannot be read: forbidden',
    ]);
    const broken: Crd = {
      spec: { versions: [{ name: 'v1alpha1', served: false, storage: true }] },
      status: { conditions: [{ type: 'Established', status: 'False', message: 'pending' }] },
    };
    assert.deepEqual(verdict(withCrd(broken), CRD), [
      'failed',
      'not Established: pending; does not serve v1beta1; does not serve v1alpha1; stores v1alpha1, not v1beta1',
    ]);
    assert.deepEqual(verdict(withCrd({}), CRD), [
      'failed',
      'not Established; does not serve v1beta1; does not serve v1alpha1; stores no version, not v1beta1',
    ]);
    assert.deepEqual(verdict(withCrd({}), 'CRD conversion webhook'), [
      'failed',
      'conversion strategy is None: v1alpha1 SidecarSets are not converted',
    ]);
  });

  it('caBundle: empty, the placeholder, unparseable, expired, expiring, not valid yet', () => {
    const name = `${POD_WEBHOOK}: caBundle`;
    assert.deepEqual(verdict(healthy(''), name), [
      'failed',
      'empty: the API server cannot verify the webhook, every call fails',
    ]);
    assert.match(check(healthy(''), name).fix ?? '', /"Certificate problems"/);
    const placeholder = Buffer.from('CA_BUNDLE_PLACEHOLDER').toString('base64');
    assert.equal(verdict(healthy(placeholder), name)[0], 'failed');
    assert.match(verdict(healthy(placeholder), name)[1], /not a PEM certificate/);
    const garbage = Buffer.from(
      '-----BEGIN CERTIFICATE-----\nnotbase64\n-----END CERTIFICATE-----\n',
    ).toString('base64');
    assert.match(verdict(healthy(garbage), name)[1], /^cannot be parsed: /);
    assert.match(verdict(healthy(bundles.expired), name)[1], /expired at 2026-11-30T/);
    assert.equal(verdict(healthy(bundles.expired), name)[0], 'failed');
    assert.deepEqual(verdict(healthy(bundles.soon), name)[0], 'warning');
    assert.match(verdict(healthy(bundles.soon), name)[1], /expires at 2026-12-04T/);
    assert.equal(passed(checkInstallation(healthy(bundles.soon), NOW)), true);
    assert.deepEqual(verdict(healthy(bundles.future), name)[0], 'failed');
    assert.match(verdict(healthy(bundles.future), name)[1], /is not valid yet$/);
    // Two certificates: the one that expires first counts.
    const both = Buffer.from(
      Buffer.from(valid, 'base64').toString() + Buffer.from(bundles.soon, 'base64').toString(),
    ).toString('base64');
    assert.equal(verdict(healthy(both), name)[0], 'warning');
  });

  it('the Service: missing, unreadable, no ready endpoints, Endpoints, a URL, nothing', () => {
    const name = `${POD_WEBHOOK}: service`;
    const withService = (value: Read<ServiceEndpoints>): InstallationState => ({
      ...healthy(),
      services: new Map([[SERVICE, value]]),
    });
    assert.deepEqual(verdict(withService(undefined), `${name} ${SERVICE}`), [
      'failed',
      'not found',
    ]);
    assert.match(
      check(withService(undefined), `${name} ${SERVICE}`).fix ?? '',
      /"The webhook is down"/,
    );
    assert.deepEqual(verdict(withService({ unreadable: 'timeout' }), `${name} ${SERVICE}`), [
      'failed',
      'cannot be read: timeout',
    ]);
    assert.deepEqual(verdict(withService({ endpointSlices: [endpointSlice([false])] }), name), [
      'failed',
      `${SERVICE} has no ready endpoints: no webhook replica is ready`,
    ]);
    assert.deepEqual(
      verdict(
        withService({
          endpointSlices: [],
          endpoints: { subsets: [{ addresses: [{}] }, {}] },
        }),
        name,
      ),
      ['ok', `${SERVICE} has 1 ready endpoint`],
    );
    const byUrl = config([
      {
        name: 'mpod.sidecarset.kruise.io',
        clientConfig: { url: 'https://x/mutate', caBundle: valid },
      },
    ]);
    assert.deepEqual(verdict(byUrl, name), [
      'warning',
      'calls https://x/mutate; https://x/readyz not probed',
    ]);
    assert.deepEqual(verdict(byUrl, `${POD_WEBHOOK}: failurePolicy`), ['ok', 'Fail']);
    const nowhere = config([{ name: 'mpod.sidecarset.kruise.io' }]);
    assert.deepEqual(verdict(nowhere, name), ['failed', 'names neither a Service nor a URL']);
    assert.equal(verdict(nowhere, `${POD_WEBHOOK}: caBundle`)[0], 'failed');
  });

  it('webhooks served at a URL: judged by what its server answers on /readyz', () => {
    const name = `${POD_WEBHOOK}: service`;
    const answering = (answer: ReadyzAnswer): InstallationState =>
      atUrl(new Map([[`${WEBHOOK_URL} ${valid}`, answer]]));
    assert.deepEqual(verdict(answering({ status: 200 }), name), [
      'ok',
      `calls ${WEBHOOK_URL}/mutate-pods; ${WEBHOOK_URL}/readyz answers 200 (outside the cluster)`,
    ]);
    const notReady = check(answering({ status: 503 }), name);
    assert.deepEqual(
      [notReady.state, notReady.message],
      ['failed', `calls ${WEBHOOK_URL}/mutate-pods; ${WEBHOOK_URL}/readyz answers 503: not ready`],
    );
    assert.match(notReady.fix ?? '', /"The webhook is down"/);
    const down = check(answering({ error: 'connect ECONNREFUSED 127.0.0.1:9443' }), name);
    assert.deepEqual(
      [down.state, down.message],
      [
        'failed',
        `calls ${WEBHOOK_URL}/mutate-pods; ${WEBHOOK_URL}/readyz unreachable from here: connect ECONNREFUSED 127.0.0.1:9443`,
      ],
    );
    assert.match(down.fix ?? '', /docs\/local-cluster\.md/);
    const checks = checkInstallation(answering({ error: 'refused' }), NOW);
    assert.equal(checks.filter((c) => c.state === 'failed').length, 4, 'one per webhook');
    assert.equal(passed(checks), false);
    const invalid = config([
      { name: 'mpod.sidecarset.kruise.io', clientConfig: { url: 'not a url', caBundle: valid } },
    ]);
    assert.deepEqual(verdict(invalid, name), ['failed', 'calls not a url: not a valid URL']);
  });

  it('every webhook at a URL (docs/local-cluster.md): the Deployment serves none, its readiness does not count', () => {
    const name = 'Deployment sidecarset-system/sidecarset-webhook';
    const local = atUrl(new Map([[`${WEBHOOK_URL} ${valid}`, { status: 200 }]]));
    const checks = checkInstallation(local, NOW);
    assert.deepEqual(
      checks.filter((c) => c.state !== 'ok').map((c) => [c.name, c.state]),
      [[`${POD_WEBHOOK}: failurePolicy`, 'warning']],
    );
    assert.equal(passed(checks), true);
    assert.deepEqual(verdict(local, name), [
      'ok',
      `0/2 replicas ready, not in use: every webhook calls ${WEBHOOK_URL}`,
    ]);
    const scaledDown = { ...local, deployment: { ...local.deployment, object: deployment(0, 0) } };
    assert.deepEqual(verdict(scaledDown, name), [
      'ok',
      `0/0 replicas ready, not in use: every webhook calls ${WEBHOOK_URL}`,
    ]);
    // Still needed: the Lease check reads how it runs the controller.
    const gone = { ...local, deployment: { ...local.deployment, object: undefined } };
    assert.deepEqual(verdict(gone, name), ['failed', 'not found']);
  });

  it('webhooks partly at a URL, or not all readable: the Deployment counts as before', () => {
    const name = 'Deployment sidecarset-system/sidecarset-webhook';
    const local = atUrl(new Map([[`${WEBHOOK_URL} ${valid}`, { status: 200 }]]));
    const conversionByService = { ...local, crd: crd(valid) };
    assert.deepEqual(verdict(conversionByService, name), ['failed', '0/2 replicas ready']);
    const [mutating, validating] = local.webhookConfigurations;
    assert.ok(mutating && validating);
    const oneByService = {
      ...local,
      webhookConfigurations: [
        mutating,
        { ...validating, object: validatingWebhookConfiguration(valid) },
      ],
    };
    assert.deepEqual(verdict(oneByService, name), ['failed', '0/2 replicas ready']);
    const unreadable = {
      ...local,
      webhookConfigurations: [mutating, { ...validating, object: { unreadable: 'forbidden' } }],
    };
    assert.deepEqual(verdict(unreadable, name), ['failed', '0/2 replicas ready']);
    const noWebhooks = {
      ...local,
      webhookConfigurations: [mutating, { ...validating, object: {} }],
    };
    assert.deepEqual(verdict(noWebhooks, name), ['failed', '0/2 replicas ready']);
  });

  it('webhook configurations: missing, unreadable, empty', () => {
    const state = healthy();
    const config = (object: Read<WebhookConfiguration>): InstallationState => ({
      ...state,
      webhookConfigurations: [{ kind: 'ValidatingWebhookConfiguration', name: 'v', object }],
    });
    const name = 'ValidatingWebhookConfiguration v';
    assert.deepEqual(verdict(config(undefined), name), ['failed', 'not found']);
    assert.deepEqual(verdict(config({ unreadable: 'forbidden' }), name), [
      'failed',
      'cannot be read: forbidden',
    ]);
    assert.deepEqual(verdict(config({}), name), ['failed', 'has no webhooks']);
    assert.equal(passed(checkInstallation(config(undefined), NOW)), false);
  });

  it('the Deployment: missing, no replica ready, fewer than desired', () => {
    const name = 'Deployment sidecarset-system/sidecarset-webhook';
    const withDeployment = (object: Read<Deployment>): InstallationState => ({
      ...healthy(),
      deployment: { namespace: 'sidecarset-system', name: 'sidecarset-webhook', object },
    });
    assert.deepEqual(verdict(withDeployment(undefined), name), ['failed', 'not found']);
    assert.deepEqual(verdict(withDeployment(deployment(2, 0) as Deployment), name), [
      'failed',
      '0/2 replicas ready',
    ]);
    assert.deepEqual(verdict(withDeployment(deployment(2, 1) as Deployment), name), [
      'warning',
      '1/2 replicas ready',
    ]);
    assert.deepEqual(verdict(withDeployment({ status: { readyReplicas: 1 } }), name), [
      'ok',
      '1/1 replicas ready',
    ]);
  });

  it('the Lease: missing, no holder, never renewed, expired', () => {
    const name = 'Lease sidecarset-system/sidecarset-controller';
    const withLease = (object: Read<Lease>): InstallationState => ({
      ...healthy(),
      lease: { namespace: 'sidecarset-system', name: 'sidecarset-controller', object },
    });
    assert.deepEqual(verdict(healthy(), name), ['ok', 'held by pod-a, renewed 3s ago']);
    assert.deepEqual(verdict(withLease(undefined), name), ['failed', 'not found']);
    assert.match(check(withLease(undefined), name).fix ?? '', /"A rollout does not move"/);
    assert.deepEqual(verdict(withLease({ spec: { holderIdentity: '' } }), name), [
      'failed',
      'has no holder',
    ]);
    assert.deepEqual(verdict(withLease({ spec: { holderIdentity: 'pod-a' } }), name), [
      'failed',
      'held by pod-a, never renewed',
    ]);
    const stale = lease('pod-a', new Date(NOW.getTime() - 60_000), 15) as Lease;
    assert.deepEqual(verdict(withLease(stale), name), [
      'failed',
      "held by pod-a, last renewed 60s ago, beyond its leaseDurationSeconds (15; by this machine's clock)",
    ]);
  });

  it('the Lease follows how the Deployment runs the controller', () => {
    const withDeployment = (object: Read<Deployment>): InstallationState => ({
      ...healthy(),
      deployment: { namespace: 'sidecarset-system', name: 'sidecarset-webhook', object },
      lease: { namespace: 'sidecarset-system', name: 'sidecarset-controller', object: undefined },
    });
    const name = 'Lease sidecarset-system/sidecarset-controller';
    const env = (replicas: number, vars: Record<string, string>) =>
      withDeployment(deployment(replicas, replicas, vars));
    assert.deepEqual(verdict(env(2, { SIDECARSET_CONTROLLER: 'false' }), name), [
      'ok',
      'not used: the Deployment runs no controller (SIDECARSET_CONTROLLER false)',
    ]);
    assert.deepEqual(verdict(env(1, { SIDECARSET_LEADER_ELECT: 'false' }), name), [
      'ok',
      'not used: leader election is off, one replica reconciles',
    ]);
    assert.deepEqual(verdict(env(3, { SIDECARSET_LEADER_ELECT: '0' }), name), [
      'warning',
      'not used: leader election is off (SIDECARSET_LEADER_ELECT) and 3 replicas all reconcile',
    ]);
    assert.deepEqual(verdict(withDeployment({}), name), [
      'ok',
      'not used: leader election is off, one replica reconciles',
    ]);
    // The controller on and electing: the Lease is needed.
    assert.deepEqual(verdict(env(2, { SIDECARSET_CONTROLLER: '1' }), name), [
      'failed',
      'not found',
    ]);
  });

  it("controllerSetup: the manifests' settings without a Deployment; SIDECARSET_LEASE_NAME", () => {
    const manifests = { controller: true, leaderElect: true, leaseName: 'sidecarset-controller' };
    assert.deepEqual(controllerSetup(undefined), manifests);
    assert.deepEqual(controllerSetup({ unreadable: 'forbidden' }), manifests);
    assert.deepEqual(
      controllerSetup(deployment(1, 1, { SIDECARSET_LEASE_NAME: 'other' }) as Deployment),
      { ...manifests, leaseName: 'other' },
    );
  });

  it('SidecarSets: counted; paused, missed pods, unrecorded revisions, an unobserved spec are warnings', () => {
    const withSets = (sidecarSets: InstallationState['sidecarSets']): InstallationState => ({
      ...healthy(),
      sidecarSets,
    });
    assert.deepEqual(verdict(withSets({ unreadable: 'no CRD' }), 'SidecarSets'), [
      'failed',
      'cannot be listed: no CRD',
    ]);
    const fine = makeSidecarSet('fine');
    const troubled: SidecarSet = {
      ...makeSidecarSet('troubled'),
      metadata: { name: 'troubled', generation: 3 },
      status: {
        observedGeneration: 2,
        missedPods: 1,
        conditions: [
          { type: 'RolloutPaused', status: 'True', reason: 'UnhealthyPods', message: '2 failed' },
        ],
      },
    };
    const pausedByUser: SidecarSet = {
      ...makeSidecarSet('user'),
      status: { missedPods: 4, conditions: [{ type: 'RolloutPaused', status: 'True' }] },
    };
    const noHistory: SidecarSet = {
      ...makeSidecarSet('history'),
      status: {
        conditions: [
          {
            type: 'RevisionHistoryFailure',
            status: 'True',
            reason: 'CannotRecordRevision',
            message: 'cannot record the ControllerRevision: forbidden (HTTP 403); …',
          },
        ],
      },
    };
    const checks = checkInstallation(withSets([fine, troubled, pausedByUser, noHistory]), NOW);
    assert.equal(passed(checks), true);
    assert.deepEqual(
      checks
        .filter((c) => c.name.startsWith('SidecarSet'))
        .map((c) => [c.name, c.state, c.message]),
      [
        ['SidecarSets', 'ok', '4 in the cluster'],
        ['SidecarSet troubled', 'warning', 'rollout paused (UnhealthyPods: 2 failed)'],
        [
          'SidecarSet troubled',
          'warning',
          '1 pod created without its sidecars (status.missedPods)',
        ],
        [
          'SidecarSet troubled',
          'warning',
          'the controller has not observed generation 3 (status.observedGeneration 2)',
        ],
        ['SidecarSet user', 'warning', 'rollout paused (RolloutPaused)'],
        ['SidecarSet user', 'warning', '4 pods created without its sidecars (status.missedPods)'],
        [
          'SidecarSet history',
          'warning',
          'cannot record the ControllerRevision: forbidden (HTTP 403); …',
        ],
      ],
    );
  });
});

describe('helpers of the reading edge', () => {
  it('referencedServices: each Service once, none from what could not be read', () => {
    assert.deepEqual(
      referencedServices(crd(valid) as Crd, [
        mutatingWebhookConfiguration(valid) as WebhookConfiguration,
        { unreadable: 'forbidden' },
        undefined,
      ]),
      [{ name: 'sidecarset-webhook', namespace: 'sidecarset-system', path: '/convert', port: 443 }],
    );
    assert.deepEqual(referencedServices(undefined, [{ webhooks: [{ name: 'w' }] }]), []);
  });

  it('urlServers: each server once per caBundle, a Service taking precedence over a URL', () => {
    const other = 'b3RoZXI=';
    assert.deepEqual(
      urlServers(crd(valid, WEBHOOK_URL) as Crd, [
        mutatingWebhookConfiguration(valid, WEBHOOK_URL) as WebhookConfiguration,
        {
          webhooks: [
            { name: 'a', clientConfig: { url: 'https://h:1/a', caBundle: other } },
            { name: 'b', clientConfig: { url: 'https://h:1/b' } },
            { name: 'c', clientConfig: { url: 'https://h:1/c', service: { name: 's' } } },
            { name: 'd', clientConfig: { url: '::' } },
          ],
        },
        { unreadable: 'forbidden' },
      ]),
      [
        { key: `${WEBHOOK_URL} ${valid}`, origin: WEBHOOK_URL, caBundle: valid },
        { key: `https://h:1 ${other}`, origin: 'https://h:1', caBundle: other },
        { key: 'https://h:1 ', origin: 'https://h:1' },
      ],
    );
    assert.deepEqual(urlServers(crd(valid) as Crd, []), []);
  });

  it('behind: generation ahead of status.observedGeneration', () => {
    const ss = makeSidecarSet('a');
    assert.equal(behind({ ...ss, metadata: { name: 'a', generation: 1 } }), true);
    assert.equal(
      behind({ ...ss, metadata: { name: 'a', generation: 1 }, status: { observedGeneration: 1 } }),
      false,
    );
    assert.equal(behind({ ...ss, metadata: { name: 'a' } }), false);
  });

  it('readyEndpoints: EndpointSlices first, an endpoint without conditions counts', () => {
    assert.equal(
      readyEndpoints({ endpointSlices: [{ endpoints: [{}, { conditions: {} }] }, {}] }),
      2,
    );
    assert.equal(readyEndpoints({ endpointSlices: [] }), 0);
  });
});
