import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import { Pod as PodModel } from 'kubernetes-models/v1/Pod';
import { parse, parseAllDocuments } from 'yaml';

import type { Pod } from '../../src/core/api/k8s-types.js';
import { runCli } from '../support/cli.js';

const examples = new URL('../../examples/', import.meta.url).pathname;
const logtail = join(examples, 'logtail-sidecarset.yaml');
const nginxPod = join(examples, 'nginx-pod.yaml');

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-'));
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

describe('sidecarset inject', () => {
  it("injects the article's logtail sidecar into the nginx pod", async () => {
    const result = await runCli(['inject', '--sidecarsets', logtail, '-f', nginxPod]);
    assert.equal(result.code, 0, result.stderr);
    const pod = parse(result.stdout) as Pod;
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    const sidecar = pod.spec.containers[0];
    assert.deepEqual(sidecar?.env, [
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'TZ', value: 'Asia/Shanghai' },
    ]);
    assert.deepEqual(sidecar.volumeMounts, [{ name: 'nginx-log', mountPath: '/var/log/nginx' }]);
    assert.deepEqual(pod.spec.volumes, [{ name: 'nginx-log', emptyDir: {} }]);
    assert.equal(
      pod.metadata.annotations?.['kruise.io/sidecarset-injected-list'],
      'logtail-sidecarset',
    );
    assert.equal(
      pod.metadata.annotations['kruise.io/sidecarset-hash'],
      '{"logtail-sidecarset":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"c2d6db65z5xxw54z8vx645fzcwxdc5b92948c442cv8zv4747xcd5w487d2c7z7d","sidecarSetName":"logtail-sidecarset","sidecarList":["logtail"]}}',
    );
    new PodModel(pod as unknown as ConstructorParameters<typeof PodModel>[0]).validate();
  });

  it('reads the pod from stdin and writes JSON', async () => {
    const result = await runCli(
      ['inject', '--sidecarsets', logtail, '-f', '-', '-o', 'json'],
      await readFile(nginxPod, 'utf8'),
    );
    assert.equal(result.code, 0, result.stderr);
    const pod = JSON.parse(result.stdout) as Pod;
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
  });

  it('injects the pod template of a Deployment and leaves unmatched objects as they are', async () => {
    const file = await tempFile(
      'deploy.yaml',
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web, namespace: shop}',
        'spec:',
        '  selector: {matchLabels: {app: nginx}}',
        '  template:',
        '    metadata: {labels: {app: nginx}}',
        '    spec:',
        '      containers: [{name: nginx, image: nginx:1.27, env: [{name: TZ, value: UTC}]}]',
        '---',
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: other, labels: {app: other}}',
        'spec: {containers: [{name: c, image: c}]}',
      ].join('\n'),
    );
    const result = await runCli(['inject', '--sidecarsets', logtail, '-f', file]);
    assert.equal(result.code, 0, result.stderr);
    const docs = parseAllDocuments(result.stdout).map((d) => d.toJS() as Record<string, unknown>);
    assert.equal(docs.length, 2);
    const template = (
      docs[0] as { spec: { template: { metadata: Record<string, unknown>; spec: Pod['spec'] } } }
    ).spec.template;
    assert.deepEqual(
      template.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    assert.equal(Object.hasOwn(template.metadata, 'namespace'), false);
    assert.deepEqual(
      (docs[1] as unknown as Pod).spec.containers.map((c) => c.name),
      ['c'],
    );
  });

  it('explains on stderr why a SidecarSet did not match', async () => {
    const pod = await tempFile(
      'pod.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}\nspec: {containers: [{name: c, image: c}]}\n',
    );
    const result = await runCli(['inject', '--sidecarsets', logtail, '-f', pod, '--explain']);
    assert.equal(result.code, 0);
    assert.match(
      result.stderr,
      /SidecarSet logtail-sidecarset: not matched: spec\.selector does not match the pod's labels/,
    );
    assert.deepEqual(
      (parse(result.stdout) as Pod).spec.containers.map((c) => c.name),
      ['c'],
    );
  });

  it('feeds Namespace labels to namespaceSelector', async () => {
    const set = await tempFile(
      'ss.yaml',
      'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: prod-only}\nspec:\n  selector: {matchLabels: {app: web}}\n  namespaceSelector: {matchLabels: {env: prod}}\n  containers: [{name: agent, image: agent:1}]\n',
    );
    const namespaces = await tempFile(
      'ns.yaml',
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {env: prod}}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: lab, labels: {env: dev}}}\n',
    );
    const podIn = (ns: string): Promise<string> =>
      tempFile(
        'pod.yaml',
        `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ${ns}, labels: {app: web}}\nspec: {containers: [{name: c, image: c}]}\n`,
      );
    const containers = async (ns: string, withNamespaces: boolean): Promise<string[]> => {
      const args = [
        'inject',
        '--sidecarsets',
        set,
        '-f',
        await podIn(ns),
        ...(withNamespaces ? ['--namespaces', namespaces] : []),
      ];
      const result = await runCli(args);
      assert.equal(result.code, 0, result.stderr);
      return (parse(result.stdout) as Pod).spec.containers.map((c) => c.name);
    };
    assert.deepEqual(await containers('shop', true), ['agent', 'c']);
    assert.deepEqual(await containers('lab', true), ['c']);
    assert.deepEqual(await containers('elsewhere', true), ['c']);
    assert.deepEqual(await containers('shop', false), ['c']);
  });

  it('keeps the hash annotations of a SidecarSet exported from a cluster', async () => {
    const text = (await readFile(logtail, 'utf8')).replace(
      'metadata:\n  name: logtail-sidecarset',
      'metadata:\n  name: logtail-sidecarset\n  annotations:\n    kruise.io/sidecarset-hash: from-cluster\n    kruise.io/sidecarset-hash-without-image: from-cluster-noimg',
    );
    const result = await runCli([
      'inject',
      '--sidecarsets',
      await tempFile('ss.yaml', text),
      '-f',
      nginxPod,
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      (parse(result.stdout) as Pod).metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '',
      /"hash":"from-cluster"/,
    );
  });

  const failures: [string, () => Promise<string[]>, number, RegExp][] = [
    [
      'a missing file',
      () => Promise.resolve(['inject', '--sidecarsets', '/nonexistent.yaml', '-f', nginxPod]),
      1,
      /^error: \/nonexistent\.yaml: cannot be read \(ENOENT\)\n$/,
    ],
    [
      'invalid YAML',
      async () => [
        'inject',
        '--sidecarsets',
        logtail,
        '-f',
        await tempFile('bad.yaml', 'kind: [Pod\n'),
      ],
      1,
      /^error: .*bad\.yaml: is not valid YAML or JSON at line/,
    ],
    [
      'an unknown kind',
      async () => [
        'inject',
        '--sidecarsets',
        logtail,
        '-f',
        await tempFile('svc.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\n'),
      ],
      1,
      /svc\.yaml: kind Service is not supported/,
    ],
    [
      'a SidecarSet file holding something else',
      () => Promise.resolve(['inject', '--sidecarsets', nginxPod, '-f', nginxPod]),
      1,
      /nginx-pod\.yaml: expected a SidecarSet, found kind Pod/,
    ],
    [
      'an invalid SidecarSet',
      async () => [
        'inject',
        '--sidecarsets',
        await tempFile(
          'ss.yaml',
          'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: s}\nspec: {selector: {matchLabels: {app: x}}}\n',
        ),
        '-f',
        nginxPod,
      ],
      1,
      /^\S*ss\.yaml: SidecarSet "s": spec: Required value: no initContainer or container defined/,
    ],
    [
      'a missing required flag',
      () => Promise.resolve(['inject', '-f', nginxPod]),
      2,
      /required option '--sidecarsets <path>' not specified/,
    ],
    [
      'an unknown output format',
      () => Promise.resolve(['inject', '--sidecarsets', logtail, '-f', nginxPod, '-o', 'xml']),
      2,
      /argument 'xml' is invalid/,
    ],
    [
      'an unknown command',
      () => Promise.resolve(['frobnicate']),
      2,
      /unknown command 'frobnicate'/,
    ],
  ];
  for (const [title, args, code, message] of failures) {
    it(`reports ${title} in one message, exit ${code}`, async () => {
      const result = await runCli(await args());
      assert.equal(result.code, code);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(result.stdout, '');
    });
  }
});

describe('sidecarset validate', () => {
  it('accepts the example SidecarSets', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ss-'));
    for (const name of ['logtail-sidecarset.yaml', 'rollout/canary-sidecarset.yaml']) {
      await writeFile(
        join(dir, name.replace('rollout/', '')),
        await readFile(join(examples, name)),
      );
    }
    const result = await runCli(['validate', '--sidecarsets', dir]);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    assert.equal(result.stdout, '2 SidecarSets valid\n');
  });

  it('prints every problem with file and field, exit 1', async () => {
    const file = await tempFile(
      'bad.yaml',
      [
        'apiVersion: apps.kruise.io/v1alpha1',
        'kind: SidecarSet',
        'metadata: {name: a}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  containers: [{name: agent, image: agent:1, podInjectPolicy: Sideways}]',
        '---',
        'apiVersion: apps.kruise.io/v1alpha1',
        'kind: SidecarSet',
        'metadata: {name: b}',
        'spec:',
        '  selector: {}',
        '  containers: [{name: Bad_Name}]',
      ].join('\n'),
    );
    const result = await runCli(['validate', '--sidecarsets', file]);
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.ok(lines.length >= 3, result.stderr);
    assert.match(
      result.stderr,
      /bad\.yaml#1: SidecarSet "a": spec\.containers\[0\]\.podInjectPolicy/,
    );
    assert.match(result.stderr, /bad\.yaml#2: SidecarSet "b": spec\.selector/);
    assert.match(result.stderr, /bad\.yaml#2: SidecarSet "b": spec\.containers\[0\]\.name/);
  });

  it('reports malformed health gate annotations as the webhook does', async () => {
    const file = await tempFile(
      'gated.yaml',
      [
        'apiVersion: apps.kruise.io/v1beta1',
        'kind: SidecarSet',
        'metadata:',
        '  name: gated',
        '  annotations:',
        '    sidecarset.dev/health-gate: "yes"',
        '    sidecarset.dev/progress-deadline-seconds: "ten"',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  containers: [{name: agent, image: agent:1}]',
      ].join('\n'),
    );
    const result = await runCli(['validate', '--sidecarsets', file]);
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr.trim().split('\n'), [
      `${file}: SidecarSet "gated": metadata.annotations[sidecarset.dev/health-gate]: Unsupported value: "yes": supported values: "on", "off"`,
      `${file}: SidecarSet "gated": metadata.annotations[sidecarset.dev/progress-deadline-seconds]: Invalid value: "ten": must be an integer number of seconds from 1 to 604800 (7 days)`,
    ]);
  });

  it('shows schema and rule errors of one SidecarSet together', async () => {
    const file = await tempFile(
      'both.yaml',
      [
        'apiVersion: apps.kruise.io/v1alpha1',
        'kind: SidecarSet',
        'metadata: {name: Bad_Name}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  bogus: 1',
        '  containers: [{name: agent, image: agent:1}]',
      ].join('\n'),
    );
    const result = await runCli(['validate', '--sidecarsets', file]);
    assert.equal(result.code, 1);
    // The schema's error, then the webhook rule's.
    assert.match(
      result.stderr,
      /both\.yaml: SidecarSet "Bad_Name": spec\.bogus: Forbidden: unknown field\n/,
    );
    assert.match(
      result.stderr,
      /both\.yaml: SidecarSet "Bad_Name": metadata\.name: Invalid value: "Bad_Name"/,
    );
  });

  it('leaves out a rule error on a field the schema already rejects', async () => {
    const file = await tempFile(
      'typed.yaml',
      'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: s}\nspec: {selector: {matchLabels: {app: a}}, containers: 3}\n',
    );
    const result = await runCli(['validate', '--sidecarsets', file]);
    assert.equal(result.code, 1);
    assert.deepEqual(
      result.stderr
        .trim()
        .split('\n')
        .map((l) => l.replace(/^.*?: SidecarSet "s": /, '')),
      ['spec.containers: Invalid value: 3: must be of type array'],
    );
  });

  it('fails on an input that holds no SidecarSet', async () => {
    const result = await runCli(['validate', '--sidecarsets', await tempFile('empty.yaml', '')]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /empty\.yaml: no SidecarSet found\n$/);
  });

  it('refuses a SidecarSet pinned to a revision: there is no revision store', async () => {
    const pinned =
      'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: pinned}\nspec: {selector: {matchLabels: {app: a}}, containers: [{name: c, image: c}], injectionStrategy: {revision: {customVersion: v1}}}\n';
    const result = await runCli([
      'validate',
      '--sidecarsets',
      await tempFile('pinned.yaml', pinned),
    ]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /pinned\.yaml: SidecarSet "pinned": .*revision/);
  });

  it('reports two SidecarSets with the same name', async () => {
    const one =
      'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: same}\nspec: {selector: {matchLabels: {app: a}}, containers: [{name: c, image: c}]}\n';
    const result = await runCli([
      'validate',
      '--sidecarsets',
      await tempFile('dup.yaml', `${one}---\n${one}`),
    ]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /dup\.yaml#2: SidecarSet "same": metadata\.name: Duplicate value: "same"/,
    );
  });
});

describe('the installed binary', () => {
  it('prints help through bin/sidecarset.js', async () => {
    const bin = new URL('../../bin/sidecarset.js', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help']);
    assert.match(stdout, /Usage: sidecarset/);
    assert.match(stdout, /inject/);
    assert.match(stdout, /validate/);
  });
});
