/** The pure certificate decisions of src/server/cert-plan.ts, on plain objects. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CertificatePolicy } from '../../src/server/cert-plan.js';
import {
  DEFAULT_CERTIFICATE_TIMES,
  caBundlePatch,
  issueBundle,
  judgeSecretData,
  secretData,
} from '../../src/server/cert-plan.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const POLICY: CertificatePolicy = {
  ...DEFAULT_CERTIFICATE_TIMES,
  dnsNames: ['sidecarset-webhook.sidecarset-system.svc'],
  ipAddresses: [],
};

describe('judgeSecretData', () => {
  it('uses a bundle it issued, and names what is wrong with others', async () => {
    const bundle = await issueBundle(POLICY, NOW);
    const other = await issueBundle(POLICY, NOW);
    assert.equal(judgeSecretData(secretData(bundle), POLICY, NOW).use, true);
    const reason = (data: Record<string, string> | undefined): string | undefined => {
      const verdict = judgeSecretData(data, POLICY, NOW);
      return verdict.use ? undefined : verdict.reason;
    };
    assert.equal(reason(undefined), 'no Secret');
    assert.equal(reason({ ...secretData(bundle), 'ca.key': '' }), 'the Secret has no ca.key');
    assert.equal(
      reason(secretData({ ...bundle, key: other.key })),
      'tls.key is not the key of tls.crt',
    );
    assert.equal(
      reason(secretData({ ...bundle, caCert: other.caCert, caKey: other.caKey })),
      'tls.crt is not signed by ca.crt',
    );
    assert.equal(
      reason(secretData({ ...bundle, caCert: bundle.cert, caKey: bundle.key })),
      'ca.crt is not a CA certificate',
    );
    assert.equal(
      judgeSecretData(secretData(bundle), { ...POLICY, ipAddresses: ['10.0.0.1'] }, NOW).use,
      false,
    );
  });
});

describe('caBundlePatch', () => {
  it('sets only the caBundles that differ, each behind a test of the webhook name', () => {
    const webhooks = [
      { name: 'a', clientConfig: { caBundle: 'Q0E=' } },
      { name: 'b', clientConfig: { caBundle: 'old' } },
      { name: 'c', clientConfig: {} },
    ];
    assert.deepEqual(caBundlePatch(webhooks, 'Q0E='), [
      { op: 'test', path: '/webhooks/1/name', value: 'b' },
      { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: 'Q0E=' },
      { op: 'test', path: '/webhooks/2/name', value: 'c' },
      { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: 'Q0E=' },
    ]);
    assert.deepEqual(caBundlePatch(webhooks.slice(0, 1), 'Q0E='), []);
  });
});
