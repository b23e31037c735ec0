/** Image references and their comparison (src/core/api/image-compare.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  imagesEqual,
  isDigestImage,
  parseImage,
  stripImageIdScheme,
} from '../../../src/core/api/image-compare.js';

describe('images', () => {
  const digest = 'busybox@sha256:' + 'a'.repeat(64);
  it('parses references without normalising', () => {
    assert.deepEqual(parseImage('docker.io/library/busybox:1.36'), {
      repository: 'docker.io/library/busybox',
      tag: '1.36',
      digest: '',
    });
    assert.equal(parseImage('repo/UPPER'), undefined);
    assert.ok(isDigestImage(digest));
    assert.ok(!isDigestImage('busybox:1'));
    assert.deepEqual(parseImage(`docker.io/busybox@sha256:${'b'.repeat(64)}`), {
      repository: 'docker.io/busybox',
      tag: '',
      digest: `sha256:${'b'.repeat(64)}`,
    });
  });

  it('refuses what reference.Parse refuses: long names, digests go-digest rejects', () => {
    assert.equal(parseImage(`${'a'.repeat(256)}:1`), undefined);
    assert.ok(parseImage(`${'a'.repeat(255)}:1`));
    for (const bad of [
      `busybox@sha256:${'a'.repeat(32)}`,
      `busybox@sha256:${'A'.repeat(64)}`,
      `busybox@md5:${'a'.repeat(32)}`,
    ]) {
      assert.equal(parseImage(bad), undefined, bad);
      assert.ok(!isDigestImage(bad), bad);
    }
    assert.ok(isDigestImage(`busybox@sha512:${'a'.repeat(128)}`));
  });
  const cases: [string, string, boolean][] = [
    [digest, digest, true],
    [digest, 'busybox:1', false],
    ['busybox:1', 'busybox:1', true],
    ['busybox:1', 'docker.io/library/busybox:1', false],
    ['busybox:1', 'Bad Ref', false],
    // TestIsContainerImageEqual (pkg/util/tools_test.go).
    ['docker.io/busybox:v1', 'docker.io/busybox:v1', true],
    ['docker.io/busybox:v1', 'docker.io/busybox:v2', false],
    [
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      true,
    ],
    [
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      `docker.io/busybox@sha256:a2d86defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      false,
    ],
  ];
  for (const [a, b, equal] of cases) {
    it(`${a} ${equal ? '=' : '≠'} ${b}`, () => {
      assert.equal(imagesEqual(a, b), equal);
    });
  }
  it('strips the imageID scheme', () => {
    assert.equal(stripImageIdScheme('docker-pullable://x@sha256:1'), 'x@sha256:1');
    assert.equal(stripImageIdScheme('x@sha256:1'), 'x@sha256:1');
  });
});
