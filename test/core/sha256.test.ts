import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import { sha256, sha256Hex } from '../../src/core/sha256.js';

function nodeHex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

describe('sha256: FIPS 180-4 / NIST vectors', () => {
  const vectors: [string, string][] = [
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
    [
      'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
      'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
    ],
    ['a'.repeat(1_000_000), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
  ];
  for (const [input, expected] of vectors) {
    it(`${input.length} bytes`, () => {
      assert.equal(sha256Hex(input), expected);
    });
  }
});

describe('sha256: agrees with node:crypto', () => {
  it('every length from 0 to 300 bytes (all padding boundaries)', () => {
    for (let n = 0; n <= 300; n++) {
      const data = new Uint8Array(n).map((_, i) => (i * 31 + n * 7) & 0xff);
      assert.equal(Buffer.from(sha256(data)).toString('hex'), nodeHex(data), `length ${n}`);
    }
  });

  it('hashes the UTF-8 encoding of text', () => {
    for (const text of ['é', '日本語', '😀 emoji', 'x<&>y\u2028', '{"containers":null}']) {
      assert.equal(sha256Hex(text), nodeHex(text), text);
    }
  });
});
