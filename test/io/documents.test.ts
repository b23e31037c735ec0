import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';

import { checkOneStdin, parseManifests, readManifests } from '../../src/io/documents.js';

describe('parseManifests', () => {
  it('reads several YAML documents, skipping empty ones', () => {
    const docs = parseManifests('kind: A\n---\n---\nkind: B\n', 'f.yaml');
    assert.deepEqual(
      docs.map((d) => [d.source, d.object['kind']]),
      [
        ['f.yaml#1', 'A'],
        ['f.yaml#3', 'B'],
      ],
    );
  });

  it('reads JSON', () => {
    assert.deepEqual(parseManifests('{"kind":"Pod","spec":{}}', 'p.json'), [
      { source: 'p.json', object: { kind: 'Pod', spec: {} } },
    ]);
  });

  it('flattens v1 Lists, nested ones too', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ kind: 'A' }, { kind: 'PodList', items: [{ kind: 'Pod' }] }],
    });
    assert.deepEqual(
      parseManifests(text, 'l.json').map((d) => [d.source, d.object['kind']]),
      [
        ['l.json.items[0]', 'A'],
        ['l.json.items[1].items[0]', 'Pod'],
      ],
    );
  });

  it('reads JSON that is not one value (a syntax error, a stream) as YAML would', () => {
    assert.deepEqual(
      parseManifests('{"kind": "A"}\n---\n{"kind": "B"}\n', 's.json').map((d) => d.source),
      ['s.json#1', 's.json#2'],
    );
    assert.throws(() => parseManifests('{"kind": "A",\n "spec": {]}', 'bad.json'), {
      code: 'SI_ERR_BAD_INPUT',
      message: /^bad\.json: is not valid YAML or JSON at line 2, column \d+/,
    });
  });

  it('names the document that is not valid YAML, and only that one', () => {
    assert.throws(() => parseManifests('kind: A\n---\na: [1\n---\nkind: C\n', 'f.yaml'), {
      message: /^f\.yaml#2: is not valid YAML or JSON at line \d+, column \d+/,
    });
  });

  it('refuses an alias bomb as bad input', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      '',
    ].join('\n');
    assert.throws(() => parseManifests(bomb, 'bomb.yaml'), {
      code: 'SI_ERR_BAD_INPUT',
      message: /^bomb\.yaml: is not valid YAML: Excessive alias count/,
    });
  });

  const bad: [string, string, RegExp][] = [
    ['invalid YAML', 'a: [1, 2\n', /^f\.yaml: is not valid YAML or JSON at line \d+, column \d+/],
    ['a scalar', '42\n', /^f\.yaml: is not an object$/],
    [
      'a list item that is no object',
      'kind: List\nitems: [3]\n',
      /f\.yaml\.items\[0\]: is not an object/,
    ],
  ];
  for (const [title, text, message] of bad) {
    it(`rejects ${title}, naming the file`, () => {
      assert.throws(() => parseManifests(text, 'f.yaml'), { code: 'SI_ERR_BAD_INPUT', message });
    });
  }
});

describe('checkOneStdin', () => {
  it('lets one flag read stdin and refuses two', () => {
    checkOneStdin({ '--sidecarsets': 'a.yaml', '--pods': '-', '--namespaces': undefined });
    assert.throws(
      () => {
        checkOneStdin({ '--sidecarsets': '-', '--pods': '-' });
      },
      {
        code: 'SI_ERR_BAD_INPUT',
        message: 'only one of --sidecarsets, --pods can read standard input (-)',
      },
    );
  });
});

describe('readManifests', () => {
  it('reads a directory: its manifest files in name order, nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'docs-'));
    await writeFile(join(dir, 'b.yaml'), 'kind: B\n');
    await writeFile(join(dir, 'a.json'), '{"kind":"A"}');
    await writeFile(join(dir, 'notes.txt'), 'kind: Ignored\n');
    await mkdir(join(dir, 'sub.yaml'));
    await writeFile(join(dir, 'c.YML'), 'kind: C\n');
    const docs = await readManifests(dir);
    assert.deepEqual(
      docs.map((d) => d.object['kind']),
      ['A', 'B', 'C'],
    );
  });

  it('reads 300,000 documents of one file without overflowing the stack', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'docs-'));
    const file = join(dir, 'many.json');
    const items = Array.from({ length: 300_000 }, (_, i) => ({ kind: 'Pod', i }));
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const docs = await readManifests(file);
    assert.equal(docs.length, 300_000);
    assert.deepEqual(docs[299_999], {
      source: `${file}.items[299999]`,
      object: { kind: 'Pod', i: 299_999 },
    });
  });

  it('reads stdin for -', async () => {
    const docs = await readManifests('-', Readable.from(['kind: ', 'Pod\n']));
    assert.deepEqual(docs, [{ source: '<stdin>', object: { kind: 'Pod' } }]);
  });

  it('reads a JSON List from stdin', async () => {
    const list = JSON.stringify({ kind: 'List', items: [{ kind: 'Pod' }, { kind: 'Pod', n: 2 }] });
    const docs = await readManifests('-', Readable.from([list.slice(0, 9), list.slice(9)]));
    assert.deepEqual(docs, [
      { source: '<stdin>.items[0]', object: { kind: 'Pod' } },
      { source: '<stdin>.items[1]', object: { kind: 'Pod', n: 2 } },
    ]);
  });

  it('names a missing file', async () => {
    await assert.rejects(readManifests('/nonexistent/x.yaml'), {
      code: 'SI_ERR_BAD_INPUT',
      message: '/nonexistent/x.yaml: cannot be read (ENOENT)',
    });
  });
});
