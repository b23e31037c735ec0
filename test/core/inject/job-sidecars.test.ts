/** Sidecars that stop with a Job: native sidecars in run-to-completion pods (docs/adr/0021-job-sidecars.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { InjectOptions, InjectionOutcome } from '../../../src/core/inject/inject.js';
import { injectPod } from '../../../src/core/inject/inject.js';
import type { Container, EnvVar, Pod } from '../../../src/core/api/k8s-types.js';
import { parsePodSidecarSetHashes } from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import { mutatePod } from '../../../src/core/mutation/pod-mutation.js';
import type { SidecarContainer, SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { FIXED_NOW, makePod, makeSidecarSet, sidecar } from '../../support/factories.js';
import { snapshotOf } from '../../support/injection-snapshot.js';

const STOP = { name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' };

const jobPod = (restartPolicy: string | undefined, extra: Partial<Pod['spec']> = {}): Pod =>
  makePod({ spec: { ...(restartPolicy === undefined ? {} : { restartPolicy }), ...extra } });

const agent = (extra: Partial<SidecarContainer> = {}): SidecarContainer =>
  sidecar('agent', { env: [STOP], ...extra });

const setOf = (...containers: SidecarContainer[]): SidecarSet =>
  makeSidecarSet('s', { containers });

function inject(
  pod: Pod,
  sets: SidecarSet[],
  extra: Partial<InjectOptions> = {},
): InjectionOutcome {
  return injectPod(pod, sets, { now: FIXED_NOW, random: () => 0.5, revisions: () => [], ...extra });
}

const names = (containers: readonly Container[] | undefined): string[] =>
  (containers ?? []).map((c) => c.name);

const find = (containers: readonly Container[] | undefined, name: string): Container | undefined =>
  (containers ?? []).find((c) => c.name === name);

describe('sidecars that stop with a Job', () => {
  for (const policy of ['Never', 'OnFailure']) {
    it(`become native sidecars in a ${policy} pod`, () => {
      const { pod, injected, warnings } = inject(jobPod(policy), [setOf(agent())]);
      assert.deepEqual(names(pod.spec.containers), ['app']);
      assert.deepEqual(names(pod.spec.initContainers), ['agent']);
      const native = pod.spec.initContainers?.[0];
      assert.ok(native);
      assert.equal(native.restartPolicy, 'Always');
      assert.equal(native.image, 'agent:1');
      assert.deepEqual(native.env, [STOP, { name: 'IS_INJECTED', value: 'true' }]);
      // restartPolicy sits where the API puts it: after resources, before volumeMounts.
      assert.deepEqual(Object.keys(native), ['name', 'image', 'env', 'restartPolicy']);
      assert.deepEqual(injected, ['s']);
      assert.deepEqual(warnings, []);
    });
  }

  for (const policy of ['Always', undefined]) {
    it(`stay containers in a pod whose restartPolicy is ${policy ?? 'unset'}`, () => {
      const { pod } = inject(jobPod(policy), [setOf(agent())]);
      assert.deepEqual(names(pod.spec.containers), ['agent', 'app']);
      assert.equal(pod.spec.initContainers, undefined);
      assert.equal(pod.spec.containers[0]?.restartPolicy, undefined);
    });
  }

  const withEnv = (env: EnvVar[]): SidecarContainer => agent({ env });
  it('read the env as OpenKruise does: a literal true in any case', () => {
    const converted = (env: EnvVar[]): boolean =>
      find(inject(jobPod('Never'), [setOf(withEnv(env))]).pod.spec.initContainers, 'agent') !==
      undefined;
    assert.equal(converted([{ ...STOP, value: 'TRUE' }]), true);
    assert.equal(converted([{ name: 'X', value: '1' }, STOP]), true);
    assert.equal(converted([{ ...STOP, value: 'false' }]), false);
    assert.equal(converted([{ ...STOP, value: '' }]), false);
    assert.equal(converted([{ name: 'X', value: 'true' }]), false);
    assert.equal(converted([]), false);
    assert.equal(
      converted([{ name: STOP.name, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]),
      false,
    );
  });

  it('count an env that transferEnv brings from an app container', () => {
    const pod = jobPod('Never');
    pod.spec.containers[0] = { name: 'app', image: 'app:1', env: [STOP] };
    const set = setOf(
      sidecar('agent', { transferEnv: [{ sourceContainerName: 'app', envName: STOP.name }] }),
    );
    assert.deepEqual(names(inject(pod, [set]).pod.spec.initContainers), ['agent']);
  });

  it('keep what injection gives a container: shared mounts, SidecarSet volumes, transferEnv', () => {
    const pod = jobPod('Never', { volumes: [{ name: 'data', emptyDir: {} }] });
    pod.spec.containers[0] = {
      name: 'app',
      image: 'app:1',
      env: [{ name: 'REGION', value: 'eu' }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    };
    const set = makeSidecarSet('s', {
      containers: [
        agent({
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'REGION' }],
          volumeMounts: [{ name: 'logs', mountPath: '/logs' }],
        }),
      ],
      volumes: [{ name: 'logs', emptyDir: {} }],
    });
    const out = inject(pod, [set]).pod;
    const native = find(out.spec.initContainers, 'agent');
    assert.ok(native);
    assert.deepEqual(
      native.volumeMounts?.map((m) => m.mountPath),
      ['/logs', '/data'],
    );
    assert.deepEqual(
      native.env?.map((e) => e.name),
      [STOP.name, 'IS_INJECTED', 'REGION'],
    );
    assert.deepEqual(
      (out.spec.volumes ?? []).map((v) => v.name),
      ['data', 'logs'],
    );
  });

  it('keep the bookkeeping annotations: the sidecarList names the container', () => {
    const annotations = inject(jobPod('Never'), [setOf(agent(), sidecar('plain'))]).pod.metadata
      .annotations;
    assert.ok(annotations);
    assert.equal(annotations['kruise.io/sidecarset-injected-list'], 's');
    const hashes = parsePodSidecarSetHashes(annotations['kruise.io/sidecarset-hash'], 'k');
    assert.deepEqual(hashes['s']?.sidecarList, ['agent', 'plain']);
  });
});

describe('where sidecars that stop with a Job go', () => {
  it('after every init container: the pod’s, then the SidecarSets’ (native or not)', () => {
    const pod = jobPod('Never', { initContainers: [{ name: 'init-0', image: 'i:1' }] });
    const set = makeSidecarSet('s', {
      initContainers: [
        sidecar('z-native', { restartPolicy: 'Always', podInjectPolicy: 'AfterAppContainer' }),
        sidecar('a-config', { podInjectPolicy: 'AfterAppContainer' }),
      ],
      containers: [agent()],
    });
    const out = inject(pod, [set]).pod;
    assert.deepEqual(names(out.spec.initContainers), ['init-0', 'a-config', 'z-native', 'agent']);
    assert.deepEqual(names(out.spec.containers), ['app']);
  });

  it('BeforeAppContainer ones first, then the others, each in SidecarSet order', () => {
    const a = makeSidecarSet('a', {
      containers: [
        sidecar('a-after', { env: [STOP], podInjectPolicy: 'AfterAppContainer' }),
        sidecar('a-before', { env: [STOP] }),
      ],
    });
    const b = makeSidecarSet('b', {
      containers: [
        sidecar('b-after', { env: [STOP], podInjectPolicy: 'AfterAppContainer' }),
        sidecar('b-before', { env: [STOP] }),
        sidecar('b-plain'),
      ],
    });
    const out = inject(jobPod('Never'), [b, a]).pod;
    assert.deepEqual(names(out.spec.initContainers), [
      'a-before',
      'b-before',
      'a-after',
      'b-after',
    ]);
    assert.deepEqual(names(out.spec.containers), ['b-plain', 'app']);
  });

  it('in place of a pod init container of that name', () => {
    const pod = jobPod('Never', {
      initContainers: [
        { name: 'agent', image: 'old:0' },
        { name: 'init-1', image: 'i:1' },
      ],
    });
    const out = inject(pod, [setOf(agent())]);
    assert.deepEqual(names(out.pod.spec.initContainers), ['agent', 'init-1']);
    const [replaced] = out.pod.spec.initContainers ?? [];
    assert.equal(replaced?.image, 'agent:1');
    assert.equal(replaced.restartPolicy, 'Always');
    assert.deepEqual(out.warnings, []);
  });
});

describe('sidecars that stop with a Job, left in spec.containers', () => {
  it('a hot-upgrade pair, with a warning', () => {
    const hot = agent({
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
    });
    const out = inject(jobPod('Never'), [setOf(hot)]);
    assert.deepEqual(names(out.pod.spec.containers), ['agent-1', 'agent-2', 'app']);
    assert.equal(out.pod.spec.initContainers, undefined);
    assert.equal(out.warnings.length, 1);
    assert.match(out.warnings[0] ?? '', /^container agent: .*=true is ignored \(a HotUpgrade/);
  });

  it('a name the pod already gives a main container, replaced there, with a warning', () => {
    const pod = jobPod('Never', {
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'agent', image: 'old:0' },
      ],
    });
    const out = inject(pod, [setOf(agent())]);
    assert.deepEqual(names(out.pod.spec.containers), ['app', 'agent']);
    assert.equal(out.pod.spec.containers[1]?.image, 'agent:1');
    assert.equal(out.pod.spec.initContainers, undefined);
    assert.match(out.warnings.join('\n'), /already has a container of that name/);
  });

  it('everything with jobSidecars: container, without a warning', () => {
    const out = inject(jobPod('OnFailure'), [setOf(agent())], { jobSidecars: 'container' });
    assert.deepEqual(names(out.pod.spec.containers), ['agent', 'app']);
    assert.equal(out.pod.spec.initContainers, undefined);
    assert.deepEqual(out.warnings, []);
  });
});

describe('the patch of a sidecar that stops with a Job', () => {
  const patchOf = (
    pod: Pod,
    jobSidecars?: 'native' | 'container',
  ): { op: string; path: string }[] => {
    const mutation = mutatePod({ operation: 'CREATE', pod }, snapshotOf([setOf(agent())]), {
      now: FIXED_NOW,
      random: () => 0.5,
      ...(jobSidecars === undefined ? {} : { jobSidecars }),
    });
    assert.ok(mutation.kind === 'mutated');
    return mutation.patch.filter((op) => op.path.startsWith('/spec'));
  };

  it('adds /spec/initContainers when the pod has none', () => {
    const ops = patchOf(jobPod('Never'));
    assert.deepEqual(
      ops.map(({ op, path }) => ({ op, path })),
      [{ op: 'add', path: '/spec/initContainers' }],
    );
    const value = (ops[0] as { value?: unknown }).value as Container[];
    assert.deepEqual(names(value), ['agent']);
    assert.equal(value[0]?.restartPolicy, 'Always');
  });

  it('adds one item behind the pod’s init containers', () => {
    const pod = jobPod('Never', { initContainers: [{ name: 'init-0', image: 'i:1' }] });
    assert.deepEqual(
      patchOf(pod).map(({ op, path }) => ({ op, path })),
      [{ op: 'add', path: '/spec/initContainers/1' }],
    );
  });

  it('is empty when the pod is injected again (reinvocationPolicy IfNeeded, ADR 1)', () => {
    const once = mutatePod(
      { operation: 'CREATE', pod: jobPod('Never') },
      snapshotOf([setOf(agent())]),
      { now: FIXED_NOW, random: () => 0.5 },
    );
    assert.ok(once.kind === 'mutated');
    assert.deepEqual(patchOf(once.pod), []);
  });

  it('adds to /spec/containers with --job-sidecars container', () => {
    assert.deepEqual(
      patchOf(jobPod('Never'), 'container').map(({ op, path }) => ({ op, path })),
      [{ op: 'add', path: '/spec/containers/0' }],
    );
  });
});
