/**
 * The health gate's tuning annotations at admission (docs/adr/0014-health-gated-rollouts.md):
 * malformed values refused on CREATE and on an UPDATE that changes them, with the field, the
 * value and what is accepted; a stored bad value left alone by an UPDATE is not refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { formatFieldError } from '../../../src/core/validation/field-error.js';
import { validateHealthAnnotations } from '../../../src/core/validation/health-annotations.js';
import { validateSidecarSet } from '../../../src/core/validation/sidecarset.js';
import { makeSidecarSet } from './fixtures.js';

const GATE = 'sidecarset.dev/health-gate';
const DEADLINE = 'sidecarset.dev/progress-deadline-seconds';
const RESTARTS = 'sidecarset.dev/max-sidecar-restarts';
const TO_PAUSE = 'sidecarset.dev/unhealthy-pods-to-pause';
const RESUMED = 'sidecarset.dev/resumed-at';

function annotated(annotations: Record<string, string>): SidecarSet {
  const ss = makeSidecarSet('gated');
  ss.metadata.annotations = annotations;
  return ss;
}

const errorsOn = (annotations: Record<string, string>, old?: Record<string, string>): string[] =>
  validateHealthAnnotations(annotations, old).map(formatFieldError);

describe('health gate annotations at admission', () => {
  it('accepts the values the controller reads, at their bounds', () => {
    const good: [string, string][] = [
      [GATE, 'on'],
      [GATE, 'off'],
      [DEADLINE, '1'],
      [DEADLINE, '604800'],
      [RESTARTS, '0'],
      [RESTARTS, '2147483647'],
      [TO_PAUSE, '1'],
      [TO_PAUSE, '1%'],
      [TO_PAUSE, '100%'],
      [RESUMED, '2026-07-02T10:05:00Z'],
      [RESUMED, '2026-07-02T10:05:00.123+02:00'],
    ];
    for (const [key, value] of good) {
      assert.deepEqual(errorsOn({ [key]: value }), [], `${key}: ${value}`);
      assert.deepEqual(
        healthSettings(annotated({ [key]: value })).problems,
        [],
        `${key}: ${value}`,
      );
    }
  });

  it('refuses each malformed value with the field, the value and what is accepted', () => {
    const deadline = `${DEADLINE}]: Invalid value: "%s": must be an integer number of seconds from 1 to 604800 (7 days)`;
    const toPause = `${TO_PAUSE}]: Invalid value: "%s": must be a number of pods from 1 to 2147483647, or a percentage of matched pods from 1% to 100%`;
    const cases: [string, string, string][] = [
      [GATE, 'yes', `${GATE}]: Unsupported value: "yes": supported values: "on", "off"`],
      [GATE, 'On', `${GATE}]: Unsupported value: "On": supported values: "on", "off"`],
      [DEADLINE, 'ten', deadline],
      [DEADLINE, '0', deadline],
      [DEADLINE, '604801', deadline],
      [DEADLINE, '1.5', deadline],
      [DEADLINE, ' 30', deadline],
      [
        RESTARTS,
        '-1',
        `${RESTARTS}]: Invalid value: "-1": must be an integer from 0 to 2147483647`,
      ],
      [
        RESTARTS,
        '2147483648',
        `${RESTARTS}]: Invalid value: "2147483648": must be an integer from 0 to 2147483647`,
      ],
      [TO_PAUSE, '150%', toPause],
      [TO_PAUSE, '-1', toPause],
      [TO_PAUSE, '0', toPause],
      [TO_PAUSE, '0%', toPause],
      [TO_PAUSE, '%', toPause],
      [TO_PAUSE, '10 %', toPause],
      [
        RESUMED,
        'yesterday',
        `${RESUMED}]: Invalid value: "%s": must be an RFC 3339 time such as "2026-07-02T10:05:00Z"`,
      ],
      [
        RESUMED,
        '2026-07-02T10:05',
        `${RESUMED}]: Invalid value: "%s": must be an RFC 3339 time such as "2026-07-02T10:05:00Z"`,
      ],
      [
        RESUMED,
        '2026-13-02T10:05:00Z',
        `${RESUMED}]: Invalid value: "%s": must be an RFC 3339 time such as "2026-07-02T10:05:00Z"`,
      ],
    ];
    for (const [key, value, message] of cases) {
      assert.deepEqual(
        errorsOn({ [key]: value }),
        [`metadata.annotations[${message.replace('%s', value)}`],
        `${key}: ${value}`,
      );
    }
  });

  it('the controller reads the same values tolerantly: the default, and a problem saying why', () => {
    const settings = healthSettings(
      annotated({ [GATE]: 'yes', [DEADLINE]: 'ten', [TO_PAUSE]: '150%', [RESUMED]: 'yesterday' }),
    );
    assert.equal(settings.enabled, true);
    assert.equal(settings.progressDeadlineSeconds, 600);
    assert.equal(settings.unhealthyPodsToPause, '1');
    assert.equal(settings.resumedAt, undefined);
    assert.deepEqual(settings.problems, [
      'sidecarset.dev/health-gate: "yes" is not valid (must be "on" or "off"); using on',
      'sidecarset.dev/progress-deadline-seconds: "ten" is not valid (must be an integer number of seconds from 1 to 604800 (7 days)); using 600',
      'sidecarset.dev/unhealthy-pods-to-pause: "150%" is not valid (must be a number of pods from 1 to 2147483647, or a percentage of matched pods from 1% to 100%); using 1',
      'sidecarset.dev/resumed-at: "yesterday" is not valid (must be an RFC 3339 time such as "2026-07-02T10:05:00Z"); using none',
    ]);
  });

  it('reports every bad annotation at once; others are not its business', () => {
    const errors = errorsOn({ [GATE]: 'yes', [RESTARTS]: 'many', 'example.com/x': 'anything' });
    assert.equal(errors.length, 2);
    assert.match(errors[0] ?? '', /health-gate/);
    assert.match(errors[1] ?? '', /max-sidecar-restarts/);
  });

  it('UPDATE (ratcheting): a stored bad value kept is accepted; changed or added, refused', () => {
    const old = { [DEADLINE]: 'ten', [GATE]: 'on' };
    assert.deepEqual(errorsOn({ [DEADLINE]: 'ten', [GATE]: 'off' }, old), [], 'kept as stored');
    assert.equal(errorsOn({ [DEADLINE]: 'eleven' }, old).length, 1, 'changed to another bad value');
    assert.equal(errorsOn({ [DEADLINE]: 'ten', [GATE]: 'yes' }, old).length, 1, 'a new bad one');
    assert.equal(errorsOn({ [DEADLINE]: 'ten' }, {}).length, 1, 'added by the update');
    assert.deepEqual(errorsOn({ [DEADLINE]: '30' }, old), [], 'fixed');
  });

  it('is part of the SidecarSet validation, with the stored object on UPDATE', () => {
    const bad = annotated({ [TO_PAUSE]: '150%' });
    assert.deepEqual(
      validateSidecarSet(bad, { others: [] }).map((e) => e.field),
      [`metadata.annotations[${TO_PAUSE}]`],
    );
    const stored = structuredClone(bad);
    const update = structuredClone(bad);
    update.spec.containers = [{ ...update.spec.containers?.[0], name: 'sidecar1', image: 'x:2' }];
    assert.deepEqual(validateSidecarSet(update, { others: [stored], old: stored }), []);
    const unannotated = makeSidecarSet('gated');
    assert.equal(validateSidecarSet(bad, { others: [], old: unannotated }).length, 1);
  });
});
