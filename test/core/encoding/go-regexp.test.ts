import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compileGoRegexp } from '../../../src/core/encoding/go-regexp.js';

const errorOf = (pattern: string): string | undefined => {
  const compiled = compileGoRegexp(pattern);
  return 'error' in compiled ? compiled.error : undefined;
};

describe("Go's regexp, as OpenKruise compiles a SidecarSet's patterns", () => {
  // What Go's regexp.Compile accepts: among them what JavaScript's RegExp refuses or reads
  // otherwise (inline flags, POSIX classes, \z, (?P<name>)).
  for (const pattern of ['.*', '^app$', '(?i)app', '[[:alpha:]]+', '\\pL+', '(?P<n>x)', 'x\\z']) {
    it(`accepts ${pattern}`, () => {
      assert.equal(errorOf(pattern), undefined);
    });
  }

  // What it refuses: look-arounds and back-references (RE2 has neither), more than 1000
  // repetitions, unbalanced parentheses; with Go's message.
  for (const [pattern, message] of [
    ['(?=x)', /invalid or unsupported Perl syntax/],
    ['(a)\\1', /invalid escape sequence/],
    ['a{1001}', /invalid repeat count/],
    ['(app', /missing closing \)/],
  ] as const) {
    it(`refuses ${pattern}`, () => {
      assert.match(errorOf(pattern) ?? '', /^error parsing regexp: /);
      assert.match(errorOf(pattern) ?? '', message);
    });
  }

  it('matches anywhere in the text, as MatchString', () => {
    const compiled = compileGoRegexp('side');
    assert.ok(!('error' in compiled));
    assert.equal(compiled.matches('my-sidecar'), true);
    assert.equal(compiled.matches('app'), false);
  });

  it(
    'matches in time linear in the text: ^(a+)+$ against thirty as and a !',
    { timeout: 10_000 },
    () => {
      const compiled = compileGoRegexp('^(a+)+$');
      assert.ok(!('error' in compiled));
      assert.equal(compiled.matches(`${'a'.repeat(30)}!`), false);
      assert.equal(compiled.matches('a'.repeat(100_000)), true);
    },
  );
});
