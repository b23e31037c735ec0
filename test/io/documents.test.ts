import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';

import { parseManifests, readManifests } from '../../src/io/documents.js';

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

  it('reads stdin for -', async () => {
    const docs = await readManifests('-', Readable.from(['kind: ', 'Pod\n']));
    assert.deepEqual(docs, [{ source: '<stdin>', object: { kind: 'Pod' } }]);
  });

  it('names a missing file', async () => {
    await assert.rejects(readManifests('/nonexistent/x.yaml'), {
      code: 'SI_ERR_BAD_INPUT',
      message: '/nonexistent/x.yaml: cannot be read (ENOENT)',
    });
  });
});
