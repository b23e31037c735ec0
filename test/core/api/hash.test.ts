import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
} from '../../../src/core/api/annotations.js';
import { defaultSidecarSet } from '../../../src/core/api/defaults.js';
import {
  applySidecarSetAdmission,
  computeSidecarSetHash,
  computeSidecarSetHashWithoutImage,
  safeEncodeString,
  sidecarSetHashInput,
  computeHashWithoutImageResources,
} from '../../../src/core/api/hash.js';
import type { SidecarSet, SidecarSetSpec } from '../../../src/core/api/sidecarset-types.js';

function loadLogtail(): SidecarSet {
  const text = readFileSync(
    new URL('../../fixtures/logtail-sidecarset.yaml', import.meta.url),
    'utf8',
  );
  return parse(text) as SidecarSet;
}

describe('hash: the verified vector (pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go)', () => {
  const ss = applySidecarSetAdmission({
    metadata: { name: 'sidecarset-test', resourceVersion: '123' },
    spec: {
      containers: [{ name: 'dns-f', image: 'dns:1.0' }],
      patchPodMetadata: [{ annotations: { key1: 'value1' } }],
      injectionStrategy: { revision: { customVersion: '1' } },
    },
  });

  it('canonical JSON', () => {
    assert.equal(
      sidecarSetHashInput(ss.spec),
      '{"containers":[{"name":"dns-f","image":"dns:1.0","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"}}]}',
    );
  });

  it('hash annotations', () => {
    assert.deepEqual(ss.metadata.annotations, {
      [SIDECARSET_HASH]: '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
      [SIDECARSET_HASH_WITHOUT_IMAGE]:
        '82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94',
    });
  });
});

describe('hash: pkg/control/sidecarcontrol/hash_test.go vectors (no defaulting)', () => {
  const app = { name: 'container1', image: 'test-image' };
  const cases: [string, SidecarSetSpec, string, string][] = [
    [
      'containers',
      { containers: [app] },
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      '',
    ],
    [
      'containers and initContainers (not native sidecars: ignored)',
      { containers: [app], initContainers: [app] },
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
    ],
    [
      'containers and initContainers with restartPolicy=Always',
      { containers: [app], initContainers: [{ ...app, restartPolicy: 'Always' }] },
      '4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w',
      '5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8',
    ],
  ];
  for (const [name, spec, hash, withoutImage] of cases) {
    it(name, () => {
      assert.equal(computeSidecarSetHash(spec), hash);
      if (withoutImage !== '') assert.equal(computeSidecarSetHashWithoutImage(spec), withoutImage);
      const changed = structuredClone(spec);
      for (const c of [...(changed.containers ?? []), ...(changed.initContainers ?? [])]) {
        c.image = 'new-image';
      }
      assert.notEqual(computeSidecarSetHash(changed), hash);
      assert.equal(
        computeSidecarSetHashWithoutImage(changed),
        computeSidecarSetHashWithoutImage(spec),
      );
      // TestSidecarSetHashWithoutImage: a field other than image changes it.
      const renamed = structuredClone(changed);
      const first = renamed.containers?.[0];
      assert.ok(first);
      first.name = 'new-name';
      assert.notEqual(
        computeSidecarSetHashWithoutImage(renamed),
        computeSidecarSetHashWithoutImage(spec),
      );
    });
  }
});

describe('hash: the logtail example (values computed as hash.go computes them)', () => {
  const ss = applySidecarSetAdmission(loadLogtail());

  it('canonical JSON: Go field order, probe defaults, quantities as written', () => {
    assert.equal(
      sidecarSetHashInput(ss.spec),
      '{"containers":[{"name":"logtail","image":"log-service/logtail:0.16.16","command":["sh","-c","/usr/local/ilogtail/run_logtail.sh 10"],"resources":{"limits":{"memory":"512Mi"},"requests":{"cpu":"10m","memory":"30Mi"}},"volumeMounts":[{"name":"nginx-log","mountPath":"/var/log/nginx"}],"livenessProbe":{"exec":{"command":["/etc/init.d/ilogtaild","status"]},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"},"transferEnv":[{"sourceContainerName":"nginx","envName":"TZ"}]}]}',
    );
  });

  it('matches the values the reference reconstructed', () => {
    assert.equal(
      ss.metadata.annotations?.[SIDECARSET_HASH],
      'c2d6db65z5xxw54z8vx645fzcwxdc5b92948c442cv8zv4747xcd5w487d2c7z7d',
    );
    assert.equal(
      ss.metadata.annotations[SIDECARSET_HASH_WITHOUT_IMAGE],
      '4bzvdfw79fd89v9xdz8wdz6z4zcdx4v4dc462296d8wwz5422687726646wxb476',
    );
  });
});

describe('hash: which containers count', () => {
  const base: SidecarSetSpec = { containers: [{ name: 'a', image: 'a:1' }] };

  it('no containers at all is {"containers":null}', () => {
    assert.equal(sidecarSetHashInput({}), '{"containers":null}');
  });

  it('all initContainers are included once one has restartPolicy Always', () => {
    const spec: SidecarSetSpec = {
      ...base,
      initContainers: [
        { name: 'i1', image: 'i:1' },
        { name: 'i2', image: 'i:2', restartPolicy: 'Always' },
      ],
    };
    const json = sidecarSetHashInput(spec);
    assert.match(json, /"initContainers":\[\{"name":"i1".*\{"name":"i2"/);
    assert.notEqual(computeSidecarSetHash(spec), computeSidecarSetHash(base));
  });

  it('initContainers without a native sidecar do not change the hash', () => {
    const spec: SidecarSetSpec = {
      ...base,
      initContainers: [{ name: 'i1', image: 'i:1', restartPolicy: 'OnFailure' }],
    };
    assert.equal(computeSidecarSetHash(spec), computeSidecarSetHash(base));
  });

  it('nothing outside containers counts', () => {
    const spec: SidecarSetSpec = {
      ...base,
      selector: { matchLabels: { a: 'b' } },
      volumes: [{ name: 'v', emptyDir: {} }],
      updateStrategy: { type: 'NotUpdate' },
      imagePullSecrets: [{ name: 's' }],
      patchPodMetadata: [{ annotations: { x: 'y' } }],
    };
    assert.equal(computeSidecarSetHash(spec), computeSidecarSetHash(base));
  });

  it('without-image blanks every image, so only images may differ', () => {
    const other: SidecarSetSpec = { containers: [{ name: 'a', image: 'a:2' }] };
    assert.equal(computeSidecarSetHashWithoutImage(other), computeSidecarSetHashWithoutImage(base));
    assert.notEqual(computeSidecarSetHash(other), computeSidecarSetHash(base));
  });

  it('without-image-resources blanks images and cold sidecars resources, not the rest', () => {
    const sized = (cpu: string, env = 'a'): SidecarSetSpec => ({
      containers: [
        { name: 'a', image: `a:${cpu}`, resources: { limits: { cpu } }, env: [{ name: env }] },
      ],
    });
    const hash = computeHashWithoutImageResources;
    assert.equal(hash(sized('1')), hash(sized('2')));
    assert.notEqual(
      computeSidecarSetHashWithoutImage(sized('1')),
      computeSidecarSetHashWithoutImage(sized('2')),
    );
    assert.notEqual(hash(sized('1')), hash(sized('1', 'b')));
    const hot = (cpu: string): SidecarSetSpec => ({
      containers: [
        {
          name: 'h',
          image: 'h:1',
          resources: { limits: { cpu } },
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
        },
      ],
    });
    assert.notEqual(hash(hot('1')), hash(hot('2')), 'hot-upgrade slots are never resized');
    const native = (cpu: string): SidecarSetSpec => ({
      initContainers: [
        { name: 'n', image: 'n:1', restartPolicy: 'Always', resources: { limits: { cpu } } },
      ],
    });
    assert.equal(hash(native('1')), hash(native('2')));
  });
});

describe('applySidecarSetAdmission', () => {
  it('overwrites stale hash annotations, keeps other annotations, does not mutate input', () => {
    const input: SidecarSet = {
      metadata: {
        name: 'x',
        annotations: {
          [SIDECARSET_HASH]: 'stale',
          [SIDECARSET_HASH_WITHOUT_IMAGE]: 'stale',
          keep: 'me',
        },
      },
      spec: { containers: [{ name: 'dns-f', image: 'dns:1.0' }] },
    };
    const snapshot = structuredClone(input);
    const out = applySidecarSetAdmission(input);
    assert.deepEqual(input, snapshot);
    assert.equal(out.metadata.annotations?.['keep'], 'me');
    assert.equal(
      out.metadata.annotations[SIDECARSET_HASH],
      '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
    );
  });

  it('equals defaulting, then hashing the defaulted spec; and is idempotent', () => {
    const ss = loadLogtail();
    const out = applySidecarSetAdmission(ss);
    const defaulted = defaultSidecarSet(ss);
    assert.deepEqual(out.spec, defaulted.spec);
    assert.equal(
      out.metadata.annotations?.[SIDECARSET_HASH],
      computeSidecarSetHash(defaulted.spec),
    );
    assert.deepEqual(applySidecarSetAdmission(out), out);
  });

  it('creates metadata when it is missing', () => {
    const out = applySidecarSetAdmission({ spec: {} } as SidecarSet);
    assert.equal(typeof out.metadata.annotations?.[SIDECARSET_HASH], 'string');
  });
});

describe('safeEncodeString', () => {
  it('maps each character through bcdfghjklmnpqrstvwxz2456789 by code point mod 27', () => {
    assert.equal(safeEncodeString('0123456789abcdef'), '456789bcdfvwxz24');
    assert.equal(safeEncodeString(''), '');
  });

  it('pads non-ASCII input with NULs to its UTF-8 length, as Go does', () => {
    // 'é' is U+00E9 (233 % 27 = 17 → 'w'), two UTF-8 bytes.
    assert.equal(safeEncodeString('é'), 'w\0');
  });
});
