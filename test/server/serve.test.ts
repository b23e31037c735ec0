/**
 * The webhook as `sidecarset serve` assembles it, on a random port with real TLS, exercised with
 * real HTTPS requests.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import jsonPatch from 'fast-json-patch';
import { Pod as PodModel } from 'kubernetes-models/v1/Pod';
import { parse } from 'yaml';

import type { Served, ServeOptions } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import { BODY_LIMIT } from '../../src/server/http-server.js';
import type { DevCertificates } from '../../src/server/tls.js';
import { ensureDevCertificates } from '../../src/server/tls.js';
import { podReview, sidecarSetReview } from '../support/admission.js';
import { eventually } from '../support/eventually.js';
import { httpsRequest, peerFingerprint, postJson } from '../support/https.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

interface ReviewAnswer {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    patch?: string;
    patchType?: string;
    status?: { code: number; message: string };
    warnings?: string[];
    auditAnnotations?: Record<string, string>;
  };
}

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'serve-'));
}

function quietIo(): {
  stdin: PassThrough;
  stdout: PassThrough;
  stderr: PassThrough;
  log: () => string;
} {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  return {
    stdin: new PassThrough(),
    stdout,
    stderr: new PassThrough(),
    log: () => Buffer.concat(chunks).toString(),
  };
}

async function start(
  overrides: Partial<ServeOptions> = {},
): Promise<{ served: Served; ca: string; io: ReturnType<typeof quietIo> }> {
  const devCertDir = await tempDir();
  const io = quietIo();
  const served = await startServe(
    {
      sidecarsets: join(examples, 'logtail-sidecarset.yaml'),
      port: 0,
      host: '127.0.0.1',
      logLevel: 'info',
      devCertDir,
      ...overrides,
    },
    io,
  );
  const ca = overrides.cert ? '' : await readFile(join(devCertDir, 'ca.crt'), 'utf8');
  return { served, ca, io };
}

async function nginxPod(): Promise<Pod> {
  return parse(await readFile(join(examples, 'nginx-pod.yaml'), 'utf8')) as Pod;
}

function patched(pod: Pod, answer: ReviewAnswer): Pod {
  assert.equal(answer.response.patchType, 'JSONPatch');
  const ops = JSON.parse(
    Buffer.from(answer.response.patch ?? '', 'base64').toString(),
  ) as jsonPatch.Operation[];
  return jsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
}

/** A defaulted SidecarSet with one cold-upgraded container, as the validating webhook receives it. */
function defaultedSidecarSet(
  apiVersion: string,
  name: string,
  container: string,
  app: string,
  annotations?: Record<string, string>,
): Record<string, unknown> {
  return {
    apiVersion,
    kind: 'SidecarSet',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: {
      selector: { matchLabels: { app } },
      containers: [
        {
          name: container,
          image: 'x:1',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'disabled' },
          upgradeStrategy: { upgradeType: 'ColdUpgrade' },
        },
      ],
      updateStrategy: { type: 'RollingUpdate', partition: 0, maxUnavailable: 1 },
    },
  };
}

describe('sidecarset serve (files mode, development certificate)', () => {
  let served: Served;
  let ca: string;
  let io: ReturnType<typeof quietIo>;
  const url = (path: string): string => `${served.url}${path}`;
  const review = async (path: string, body: unknown): Promise<ReviewAnswer> => {
    const { status, json } = await postJson(url(path), body, ca);
    assert.equal(status, 200);
    return json as ReviewAnswer;
  };

  before(async () => {
    ({ served, ca, io } = await start());
  });
  after(async () => {
    await served.close();
  });

  it("injects logtail into the article's pod: [logtail, nginx], a valid Pod", async () => {
    const pod = await nginxPod();
    const answer = await review('/mutate-pods', podReview(pod, { uid: 'u-1' }));
    assert.equal(answer.apiVersion, 'admission.k8s.io/v1');
    assert.equal(answer.response.uid, 'u-1');
    assert.equal(answer.response.allowed, true);
    assert.deepEqual(answer.response.auditAnnotations, { injected: 'logtail-sidecarset' });
    const out = patched(pod, answer);
    assert.deepEqual(
      out.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    assert.deepEqual(out.spec.containers[0]?.env?.at(-1), { name: 'TZ', value: 'Asia/Shanghai' });
    new PodModel(out as unknown as ConstructorParameters<typeof PodModel>[0]).validate();
    assert.match(io.log(), /"uid":"u-1".*"result":"injected"/);
  });

  it('answers v1beta1 in v1beta1', async () => {
    const answer = await review(
      '/mutate-pods',
      podReview(await nginxPod(), { apiVersion: 'admission.k8s.io/v1beta1' }),
    );
    assert.equal(answer.apiVersion, 'admission.k8s.io/v1beta1');
    assert.equal(answer.response.allowed, true);
    assert.ok(answer.response.patch);
  });

  it('gives the same patch for a dry run, and does not count it as an injection', async () => {
    const metric = async (): Promise<number> => {
      const text = (await httpsRequest(url('/metrics'), { ca })).text;
      const line = /^sidecarset_injections_total\{sidecarset="logtail-sidecarset"\} (\d+)$/m.exec(
        text,
      );
      return Number(line?.[1] ?? 0);
    };
    const pod = await nginxPod();
    const before = await metric();
    const dry = await review('/mutate-pods', podReview(pod, { dryRun: true }));
    assert.equal(await metric(), before);
    const real = await review('/mutate-pods', podReview(pod));
    assert.equal(await metric(), before + 1);
    // The two requests may straddle a second: the hash annotations' updateTimestamp is "now".
    const withoutTime = (p: unknown): string =>
      JSON.stringify(p).replace(/\\"updateTimestamp\\":\\"[^\\]*\\"/g, '');
    assert.equal(withoutTime(patched(pod, dry)), withoutTime(patched(pod, real)));
    assert.match(JSON.stringify(patched(pod, real)), /updateTimestamp/);
  });

  it('leaves alone what it must: UPDATE, subresources, other resources, unmatched pods, injected pods', async () => {
    const pod = await nginxPod();
    const injected = patched(pod, await review('/mutate-pods', podReview(pod)));
    const cases: [string, Record<string, unknown>][] = [
      ['UPDATE', podReview(pod, { operation: 'UPDATE', oldObject: pod })],
      ['a subresource', podReview(pod, { subResource: 'status' })],
      ['another resource', sidecarSetReview({}, { operation: 'DELETE' })],
      [
        'a pod no SidecarSet matches',
        podReview({ ...pod, metadata: { name: 'x', labels: { app: 'other' } } }),
      ],
      ['an injected pod (reinvocation)', podReview(injected)],
    ];
    for (const [title, body] of cases) {
      const answer = await review('/mutate-pods', body);
      assert.equal(answer.response.allowed, true, title);
      assert.equal(answer.response.patch, undefined, title);
    }
  });

  for (const file of ['logtail-sidecarset.yaml', 'logtail-sidecarset-v1beta1.yaml']) {
    it(`defaults and hashes SidecarSets (/mutate-sidecarsets, ${file})`, async () => {
      const set = parse(await readFile(join(examples, file), 'utf8')) as Record<string, unknown>;
      const answer = await review('/mutate-sidecarsets', sidecarSetReview(set));
      assert.equal(answer.response.allowed, true);
      const ops = JSON.parse(
        Buffer.from(answer.response.patch ?? '', 'base64').toString(),
      ) as jsonPatch.Operation[];
      const out = jsonPatch.applyPatch(structuredClone(set), ops).newDocument as {
        metadata: { annotations: Record<string, string> };
        spec: { containers: { podInjectPolicy: string }[]; updateStrategy: { partition: number } };
      };
      assert.equal(
        out.metadata.annotations['kruise.io/sidecarset-hash'],
        'c2d6db65z5xxw54z8vx645fzcwxdc5b92948c442cv8zv4747xcd5w487d2c7z7d',
      );
      assert.equal(out.spec.containers[0]?.podInjectPolicy, 'BeforeAppContainer');
      assert.equal(out.spec.updateStrategy.partition, 0);
      const again = await review('/mutate-sidecarsets', sidecarSetReview(out));
      assert.equal(
        again.response.patch,
        undefined,
        'a defaulted, hashed SidecarSet needs no patch',
      );
    });
  }

  it('validates SidecarSets, conflicts with the cached ones included (/validate-sidecarsets)', async () => {
    const agent = (name: string, container: string, app: string): Record<string, unknown> =>
      defaultedSidecarSet('apps.kruise.io/v1alpha1', name, container, app);
    const ok = await review(
      '/validate-sidecarsets',
      sidecarSetReview(agent('other', 'agent', 'nginx')),
    );
    assert.equal(ok.response.allowed, true);
    const conflict = await review(
      '/validate-sidecarsets',
      sidecarSetReview(agent('other', 'logtail', 'nginx')),
    );
    assert.equal(conflict.response.allowed, false);
    assert.equal(conflict.response.status?.code, 422);
    assert.match(
      conflict.response.status.message,
      /container logtail already exist in logtail-sidecarset/,
    );
    const elsewhere = await review(
      '/validate-sidecarsets',
      sidecarSetReview(agent('other', 'logtail', 'web')),
    );
    assert.equal(elsewhere.response.allowed, true, 'selectors that cannot overlap do not conflict');
    const invalid = await review(
      '/validate-sidecarsets',
      sidecarSetReview({ ...agent('bad', 'x', 'a'), spec: { selector: {} } }),
    );
    assert.equal(invalid.response.allowed, false);
    assert.match(invalid.response.status?.message ?? '', /spec/);
  });

  it('refuses malformed health gate annotations; an UPDATE keeping a stored one passes', async () => {
    const gated = (annotations: Record<string, string>): Record<string, unknown> =>
      defaultedSidecarSet('apps.kruise.io/v1beta1', 'gated', 'gated', 'gated', annotations);
    const bad = { 'sidecarset.dev/unhealthy-pods-to-pause': '150%' };
    const created = await review('/validate-sidecarsets', sidecarSetReview(gated(bad)));
    assert.equal(created.response.allowed, false);
    assert.equal(created.response.status?.code, 422);
    assert.equal(
      created.response.status.message,
      'metadata.annotations[sidecarset.dev/unhealthy-pods-to-pause]: Invalid value: "150%": ' +
        'must be a number of pods from 1 to 2147483647, or a percentage of matched pods from 1% to 100%',
    );
    const kept = await review(
      '/validate-sidecarsets',
      sidecarSetReview(gated({ ...bad, 'example.com/owner': 'team-a' }), {
        operation: 'UPDATE',
        oldObject: gated(bad),
      }),
    );
    assert.equal(kept.response.allowed, true, 'the stored value is not touched');
    const changed = await review(
      '/validate-sidecarsets',
      sidecarSetReview(gated({ 'sidecarset.dev/unhealthy-pods-to-pause': '-1' }), {
        operation: 'UPDATE',
        oldObject: gated(bad),
      }),
    );
    assert.equal(changed.response.allowed, false);
    assert.match(changed.response.status?.message ?? '', /Invalid value: "-1"/);
  });

  it('denies an UPDATE whose oldObject is not a SidecarSet (400 BadRequest), never a 500', async () => {
    const set = defaultedSidecarSet('apps.kruise.io/v1beta1', 'agent', 'agent', 'agent');
    const malformed: [string, unknown][] = [
      ['no metadata', { apiVersion: set['apiVersion'], kind: 'SidecarSet', spec: set['spec'] }],
      ['no spec', { apiVersion: set['apiVersion'], kind: 'SidecarSet', metadata: set['metadata'] }],
      ['containers not an array', { ...set, spec: { ...(set['spec'] as object), containers: 7 } }],
      [
        'a container without a name',
        { ...set, spec: { ...(set['spec'] as object), containers: [{}] } },
      ],
      ['annotations not strings', { ...set, metadata: { name: 'agent', annotations: { a: 1 } } }],
      ['a string', 'logtail'],
      ['an array', [set]],
      ['missing', null],
    ];
    for (const [what, oldObject] of malformed) {
      const { status, json } = await postJson(
        url('/validate-sidecarsets'),
        sidecarSetReview(set, { operation: 'UPDATE', oldObject, uid: `old-${what}` }),
        ca,
      );
      assert.equal(status, 200, what);
      const answer = json as ReviewAnswer;
      assert.equal(answer.kind, 'AdmissionReview', what);
      assert.equal(answer.response.uid, `old-${what}`);
      assert.equal(answer.response.allowed, false, what);
      assert.equal(answer.response.status?.code, 400, what);
      assert.match(
        answer.response.status.message,
        /^request\.oldObject is not a SidecarSet: /,
        what,
      );
    }
    // A stored object only an older or OpenKruise's schema admitted stays updatable.
    const olderSchema = { ...set, spec: { ...(set['spec'] as object), fieldOfAnotherRelease: 1 } };
    for (const oldObject of [set, olderSchema]) {
      const { status, json } = await postJson(
        url('/validate-sidecarsets'),
        sidecarSetReview(set, { operation: 'UPDATE', oldObject }),
        ca,
      );
      assert.equal(status, 200);
      assert.equal((json as ReviewAnswer).response.allowed, true, JSON.stringify(json));
    }
  });

  it('converts SidecarSets between v1alpha1 and v1beta1 (/convert)', async () => {
    const set = parse(
      await readFile(join(examples, 'logtail-sidecarset-v1beta1.yaml'), 'utf8'),
    ) as Record<string, unknown>;
    const { status, json } = await postJson(
      url('/convert'),
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'c-1', desiredAPIVersion: 'apps.kruise.io/v1alpha1', objects: [set] },
      },
      ca,
    );
    assert.equal(status, 200);
    const answer = json as {
      kind: string;
      response: {
        uid: string;
        result: { status: string };
        convertedObjects: { apiVersion: string; metadata: { labels: Record<string, string> } }[];
      };
    };
    assert.equal(answer.kind, 'ConversionReview');
    assert.equal(answer.response.uid, 'c-1');
    assert.equal(answer.response.result.status, 'Success');
    const [converted] = answer.response.convertedObjects;
    assert.equal(converted?.apiVersion, 'apps.kruise.io/v1alpha1');
    assert.equal(
      converted.metadata.labels['apps.kruise.io/sidecarset-custom-version'],
      'logtail-0.16.16',
    );
    const bad = await postJson(url('/convert'), { kind: 'AdmissionReview' }, ca);
    assert.equal(bad.status, 400);
    assert.match(
      JSON.stringify(bad.json),
      /invalid ConversionReview: kind must be ConversionReview/,
    );
    const metrics = (await httpsRequest(url('/metrics'), { ca })).text;
    assert.match(
      metrics,
      /sidecarset_admission_requests_total\{endpoint="convert",decision="allowed",result="converted"\} 1/,
    );
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    assert.equal((await httpsRequest(url('/healthz'), { ca })).text, 'ok');
    assert.equal((await httpsRequest(url('/readyz'), { ca })).status, 200);
    const metrics = (await httpsRequest(url('/metrics'), { ca })).text;
    assert.match(
      metrics,
      /^sidecarset_admission_requests_total\{endpoint="mutate-pods",decision="allowed",result="injected"\} \d+$/m,
    );
    assert.match(
      metrics,
      /^sidecarset_admission_duration_seconds_bucket\{le="0\.005",endpoint="mutate-pods"\} \d+$/m,
    );
    assert.match(metrics, /^sidecarset_cache_objects\{kind="SidecarSet"\} 1$/m);
    const expiry = /^sidecarset_tls_certificate_expiry_timestamp_seconds (\d+)$/m.exec(metrics);
    assert.ok(expiry?.[1] !== undefined && Number(expiry[1]) * 1000 > Date.now());
  });

  const badInputs: [string, () => Promise<{ status: number; text: string }>, number, RegExp][] = [
    [
      'a body that is not JSON',
      () => httpsRequest(url('/mutate-pods'), { body: '{"apiVersion":', ca }),
      400,
      /JSON/i,
    ],
    [
      'a wrong content type',
      () => httpsRequest(url('/mutate-pods'), { body: 'hello', contentType: 'text/plain', ca }),
      415,
      /content-type/i,
    ],
    [
      'no request',
      () =>
        httpsRequest(url('/mutate-pods'), {
          body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
          ca,
        }),
      400,
      /has no request/,
    ],
    [
      'no uid',
      async () =>
        httpsRequest(url('/mutate-pods'), {
          body: JSON.stringify(podReview(await nginxPod(), { uid: '' })),
          ca,
        }),
      400,
      /request\.uid is missing/,
    ],
    [
      'an unknown AdmissionReview version',
      async () =>
        httpsRequest(url('/mutate-pods'), {
          body: JSON.stringify(podReview(await nginxPod(), { apiVersion: 'admission.k8s.io/v2' })),
          ca,
        }),
      400,
      /admission\.k8s\.io\/v2.{0,4} is not supported/,
    ],
    [
      'a wrong kind',
      () =>
        httpsRequest(url('/mutate-pods'), {
          body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Pod' }),
          ca,
        }),
      400,
      /kind must be AdmissionReview/,
    ],
    [
      'an oversized body',
      () => httpsRequest(url('/mutate-pods'), { body: Buffer.alloc(BODY_LIMIT + 1, 32), ca }),
      413,
      /too large/i,
    ],
    ['an unknown path', () => httpsRequest(url('/mutate'), { body: '{}', ca }), 404, /not found/i],
  ];
  for (const [title, send, status, message] of badInputs) {
    it(`answers ${title} with ${status} and a clear message, and keeps serving`, async () => {
      const result = await send();
      assert.equal(result.status, status, result.text);
      assert.match(result.text, message);
      assert.equal((await httpsRequest(url('/healthz'), { ca })).status, 200);
    });
  }

  it('counts rejected bodies under the same endpoint label as admissions', async () => {
    const metrics = (await httpsRequest(url('/metrics'), { ca })).text;
    assert.match(
      metrics,
      /^sidecarset_admission_requests_total\{endpoint="mutate-pods",decision="invalid",result="415"\} 1$/m,
    );
    assert.match(
      metrics,
      /^sidecarset_admission_requests_total\{endpoint="mutate-pods",decision="invalid",result="bad-review"\} \d+$/m,
    );
  });

  it('rejects an object that is not a Pod inside a well-formed review', async () => {
    const answer = await review(
      '/mutate-pods',
      podReview({ metadata: { name: 'x' }, spec: { containers: 'no' } }, { uid: 'u-2' }),
    );
    assert.equal(answer.response.uid, 'u-2');
    assert.equal(answer.response.allowed, false);
    assert.equal(answer.response.status?.code, 400);
    assert.match(
      answer.response.status.message,
      /^request\.object is not a valid Pod: spec\.containers must be a list, not a string$/,
    );
  });

  it('names the field of a malformed pod, never a JavaScript error, and logs it at warn', async () => {
    const pod = { ...(await nginxPod()), spec: { ...(await nginxPod()).spec, volumes: {} } };
    const answer = await review('/mutate-pods', podReview(pod, { uid: 'u-shape' }));
    assert.equal(answer.response.allowed, false);
    assert.equal(answer.response.status?.code, 400);
    assert.equal(
      answer.response.status.message,
      'request.object is not a valid Pod: spec.volumes must be a list, not an object',
    );
    assert.match(io.log(), /"level":40,[^\n]*"uid":"u-shape"/);
  });

  it('injects a pod whose hash annotations are garbage, rewriting them, with a warning', async () => {
    const pod = await nginxPod();
    pod.metadata.annotations = {
      'kruise.io/sidecarset-hash': '{',
      'kruise.io/sidecarset-hash-without-image': '[]',
      keep: 'me',
    };
    const answer = await review('/mutate-pods', podReview(pod, { uid: 'u-hash' }));
    assert.equal(answer.response.allowed, true);
    const out = patched(pod, answer);
    assert.deepEqual(
      out.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    const annotations = out.metadata.annotations ?? {};
    assert.equal(annotations['keep'], 'me');
    for (const key of ['kruise.io/sidecarset-hash', 'kruise.io/sidecarset-hash-without-image']) {
      const entry = (
        JSON.parse(annotations[key] ?? '') as Record<string, { sidecarSetName: string }>
      )['logtail-sidecarset'];
      assert.equal(entry?.sidecarSetName, 'logtail-sidecarset', key);
    }
    assert.deepEqual(answer.response.warnings, [
      'pod annotation kruise.io/sidecarset-hash cannot be parsed: it is not valid JSON; ' +
        'pod annotation kruise.io/sidecarset-hash-without-image cannot be parsed: it is not a ' +
        'JSON object: ignored and rewritten',
    ]);
    assert.match(io.log(), /"level":40,[^\n]*"uid":"u-hash"[^\n]*"result":"injected"/);
  });
});

describe('a pod the SidecarSets cannot be injected into', () => {
  it('is denied with the SidecarSet and the problem named, logged at error', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'ss.yaml'),
      [
        'apiVersion: apps.kruise.io/v1alpha1',
        'kind: SidecarSet',
        'metadata: {name: config-agent}',
        'spec:',
        '  selector: {matchLabels: {app: nginx}}',
        '  containers: [{name: agent, image: agent:1}]',
        '  patchPodMetadata:',
        '    - annotations: {example.com/config: \'{"agent":true}\'}',
        '      patchPolicy: MergePatchJson',
        '',
      ].join('\n'),
    );
    const { served, ca, io } = await start({ sidecarsets: dir });
    try {
      const pod = await nginxPod();
      pod.metadata.annotations = { 'example.com/config': 'not json' };
      const { json } = await postJson(
        `${served.url}/mutate-pods`,
        podReview(pod, { uid: 'u-fail' }),
        ca,
      );
      const answer = json as ReviewAnswer;
      assert.equal(answer.response.allowed, false);
      assert.equal(
        answer.response.status?.message,
        'cannot inject SidecarSet "config-agent" into pod default/test-pod: annotation ' +
          "example.com/config: cannot merge the patchPodMetadata value into the pod's " +
          "(MergePatchJson): the pod's value is not valid JSON",
      );
      assert.match(io.log(), /"level":50,[^\n]*"uid":"u-fail"[^\n]*"result":"rejected"/);
    } finally {
      await served.close();
    }
  });
});

/**
 * Two development certificates, `a` copied to the files `cert` and `key` that serve is given,
 * and both CAs.
 */
async function twoPairs(): Promise<{
  a: DevCertificates;
  b: DevCertificates;
  cert: string;
  key: string;
  ca: string[];
}> {
  const [first, second, live] = await Promise.all([tempDir(), tempDir(), tempDir()]);
  const a = await ensureDevCertificates(first, new Date());
  const b = await ensureDevCertificates(second, new Date());
  const cert = join(live, 'tls.crt');
  const key = join(live, 'tls.key');
  await copyFile(a.certFile, cert);
  await copyFile(a.keyFile, key);
  const ca = [await readFile(a.caFile, 'utf8'), await readFile(b.caFile, 'utf8')];
  return { a, b, cert, key, ca };
}

describe('certificate rotation on disk', () => {
  it('gives the next connection the new certificate; a request in flight completes', async () => {
    const { a, b, cert, key, ca } = await twoPairs();
    const fingerprint = async (file: string): Promise<string> =>
      new X509Certificate(await readFile(file)).fingerprint256;
    const { served } = await start({ cert, key });
    try {
      const url = `${served.url}/mutate-pods`;
      assert.equal(
        (await httpsRequest(`${served.url}/healthz`, { ca })).fingerprint,
        await fingerprint(a.certFile),
      );

      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      // A request in flight: headers and half of the body sent on a connection made with cert A.
      const body = JSON.stringify(podReview(await nginxPod(), { uid: 'in-flight' }));
      const inFlight = new Promise<{ status: number; text: string; fingerprint: string }>(
        (resolve, reject) => {
          const req = request(
            url,
            {
              method: 'POST',
              ca,
              agent: false,
              headers: {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
              },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                resolve({
                  status: res.statusCode ?? 0,
                  text: Buffer.concat(chunks).toString(),
                  fingerprint: peerFingerprint(res.socket),
                });
              });
            },
          );
          req.on('error', reject);
          req.write(body.slice(0, 100));
          void released.then(() => req.end(body.slice(100)));
        },
      );

      // Rotate: write both files next to their targets, then rename over them.
      await (async () => {
        await writeFile(`${key}.new`, await readFile(b.keyFile));
        await writeFile(`${cert}.new`, await readFile(b.certFile));
        await rename(`${key}.new`, key);
        await rename(`${cert}.new`, cert);
        const wanted = await fingerprint(b.certFile);
        for (let i = 0; i < 200; i++) {
          if ((await httpsRequest(`${served.url}/healthz`, { ca })).fingerprint === wanted) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error('the new certificate was never served');
      })();
      release();
      const finished = await inFlight;
      assert.equal(finished.status, 200, finished.text);
      assert.equal((JSON.parse(finished.text) as ReviewAnswer).response.uid, 'in-flight');
      assert.equal(finished.fingerprint, await fingerprint(a.certFile));
    } finally {
      await served.close();
    }
  });
});

describe('non-atomic certificate rotation', () => {
  it('waits for the matching pair without an error line; a pair still broken is reported', async () => {
    const { a, b, cert, key, ca } = await twoPairs();
    const wanted = new X509Certificate(await readFile(b.certFile)).fingerprint256;
    const { served, io } = await start({ cert, key });
    const errorLines = (): string[] =>
      io
        .log()
        .split('\n')
        .filter((l) => l.includes('"level":50'));
    try {
      // What `cp` or a sidecar writing the files one after the other does: the key, then the cert.
      await writeFile(key, await readFile(b.keyFile));
      await new Promise((r) => setTimeout(r, 300));
      await writeFile(cert, await readFile(b.certFile));
      await eventually(
        async () => (await httpsRequest(`${served.url}/healthz`, { ca })).fingerprint === wanted,
        'the new certificate',
        5000,
      );
      await new Promise((r) => setTimeout(r, 1500)); // past the retry
      assert.deepEqual(errorLines(), []);
      assert.match(io.log(), /serving certificate reloaded/);

      // A key that stays foreign to the certificate is an error, reported once.
      await writeFile(key, await readFile(a.keyFile));
      await eventually(() => errorLines().length > 0, 'the error line', 5000);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(errorLines().length, 1, errorLines().join('\n'));
      assert.match(errorLines()[0] ?? '', /does not belong to the certificate/);
      assert.equal((await httpsRequest(`${served.url}/healthz`, { ca })).fingerprint, wanted);
    } finally {
      await served.close();
    }
  });
});

describe('files-mode reload', () => {
  it('reloads a changed file and keeps the last good SidecarSets when a file turns bad', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ss.yaml');
    const original = await readFile(join(examples, 'logtail-sidecarset.yaml'), 'utf8');
    await writeFile(file, original);
    const { served, ca, io } = await start({ sidecarsets: dir });
    try {
      const image = async (): Promise<string | undefined> => {
        const pod = await nginxPod();
        const answer = (await postJson(`${served.url}/mutate-pods`, podReview(pod), ca))
          .json as ReviewAnswer;
        return patched(pod, answer).spec.containers[0]?.image;
      };
      const eventually = async (want: string | undefined): Promise<void> => {
        for (let i = 0; i < 200; i++) {
          if ((await image()) === want) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(await image(), want);
      };
      assert.equal(await image(), 'log-service/logtail:0.16.16');
      await writeFile(file, original.replace('logtail:0.16.16', 'logtail:0.16.18'));
      await eventually('log-service/logtail:0.16.18');
      await writeFile(file, 'kind: SidecarSet\nspec: [broken\n');
      for (let i = 0; i < 200 && !/reload failed/.test(io.log()); i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.match(io.log(), /reload failed; keeping the last good SidecarSets/);
      assert.equal(await image(), 'log-service/logtail:0.16.18');
    } finally {
      await served.close();
    }
  });

  it('refuses to start on an invalid SidecarSet file', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'ss.yaml'),
      'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: s}\nspec: {}\n',
    );
    await assert.rejects(
      start({ sidecarsets: dir }),
      /invalid SidecarSets:\n.*ss\.yaml: SidecarSet "s"/,
    );
  });
});
