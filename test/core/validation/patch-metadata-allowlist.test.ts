/**
 * The patchPodMetadata allow-list (src/core/validation/patch-metadata-allowlist.ts), with the cases
 * of OpenKruise's TestSidecarSetPodMetadataWhitelist
 * (pkg/webhook/sidecarset/validating/sidecarset_validating_test.go).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { formatFieldErrors } from '../../../src/core/validation/field-error.js';
import {
  disallowedPatchKeys,
  parseAllowList,
} from '../../../src/core/validation/patch-metadata-allowlist.js';
import { makeSidecarSet } from './fixtures.js';

/** A SidecarSet labelled `labels` whose patchPodMetadata writes `keys`. */
function writing(keys: string[], labels: Record<string, string> = {}): SidecarSet {
  const ss = makeSidecarSet('test-sidecarset');
  ss.metadata.labels = labels;
  ss.spec.patchPodMetadata = [
    { annotations: Object.fromEntries(keys.map((k) => [k, 'v'])), patchPolicy: 'Overwrite' },
  ];
  return ss;
}

const refused = (ss: SidecarSet, json?: string): string =>
  formatFieldErrors(disallowedPatchKeys(ss, json === undefined ? undefined : parseAllowList(json)));

describe('patchPodMetadata allow-list', () => {
  it('denies every key when no allow-list is configured', () => {
    assert.match(refused(writing(['oom-score'])), /SidecarSet patch metadata whitelist not found/);
  });

  it('allows nothing to check when the SidecarSet patches nothing', () => {
    assert.equal(refused(makeSidecarSet('test-sidecarset')), '');
  });

  it('allows keys matching an expression of a rule without selector (Go regexp, unanchored)', () => {
    const list = JSON.stringify({
      rules: [{ allowedAnnotationKeyExprs: ['^oom-score$', 'example'] }],
    });
    assert.equal(refused(writing(['oom-score', 'my.example.com/x']), list), '');
    assert.equal(
      refused(writing(['oom-score', 'cpu-set']), list),
      'spec.patchPodMetadata[0].annotations[cpu-set]: Forbidden: sidecarSet patch metadata annotation(cpu-set) is not allowed',
    );
  });

  it('applies a rule only to SidecarSets its selector matches by their labels', () => {
    const list = JSON.stringify({
      rules: [
        { selector: { matchLabels: { team: 'net' } }, allowedAnnotationKeyExprs: ['^oom-score$'] },
      ],
    });
    assert.equal(refused(writing(['oom-score'], { team: 'net' }), list), '');
    assert.match(
      refused(writing(['oom-score'], { team: 'web' }), list),
      /^spec.patchPodMetadata: Forbidden: sidecarSet patch metadata annotation is not allowed$/,
    );
  });

  it('an empty list of rules denies, and `.*` allows every key', () => {
    assert.match(refused(writing(['a']), '{"rules":[]}'), /annotation is not allowed/);
    assert.equal(
      refused(writing(['a', 'b/c']), '{"rules":[{"allowedAnnotationKeyExprs":[".*"]}]}'),
      '',
    );
  });

  it('refuses an allow-list that is not one, naming what is wrong', () => {
    assert.throws(() => parseAllowList('{'), /allow-list is not JSON/);
    assert.throws(() => parseAllowList('{}'), /needs "rules"/);
    assert.throws(() => parseAllowList('{"rules":[1]}'), /rules\[0\] is not an object/);
    assert.throws(
      () => parseAllowList('{"rules":[{"allowedAnnotationKeyExprs":["a", 2]}]}'),
      /allowedAnnotationKeyExprs is not a list of strings/,
    );
    // Go's syntax: a lookahead is not RE2.
    assert.throws(
      () => parseAllowList('{"rules":[{"allowedAnnotationKeyExprs":["(?=x)"]}]}'),
      /rules\[0\]\.allowedAnnotationKeyExprs\[0\]: .*/,
    );
    assert.throws(
      () => parseAllowList('{"rules":[{"selector":"team=net","allowedAnnotationKeyExprs":[]}]}'),
      /selector is not a label selector/,
    );
  });
});
