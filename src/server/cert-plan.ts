/**
 * Self-managed webhook certificates, the decisions without I/O: whether the CA and serving
 * certificate kept in a Secret can be used, what to write instead, and which webhooks need their
 * caBundle corrected. src/k8s/certificates.ts does the reads and writes.
 *
 * As OpenKruise's webhook does it (pkg/webhook/util/writer/certwriter.go, handleCommon and
 * validCert; pkg/webhook/util/generator/util.go, ValidCACert): a Secret whose key and certificate
 * belong together, whose certificate the CA signed for the wanted name and which stays valid beyond
 * the renewal window is reused, anything else is replaced. Unlike OpenKruise, a serving
 * certificate that only needs renewing keeps its CA, so the caBundle does not change.
 *
 * selfsigned, with the x509 libraries under it (~15 MiB of resident set), is imported only when a
 * certificate is issued: a webhook given --cert/--key, or reusing its certificate, never needs it.
 */
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';

/** The CA and the serving certificate, PEM. */
export interface CertificateBundle {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

/** Where each PEM lives in the Secret's data: the kubernetes.io/tls names plus the CA's. */
const SECRET_KEYS: Readonly<Record<keyof CertificateBundle, string>> = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  cert: 'tls.crt',
  key: 'tls.key',
};

export interface CertificatePolicy {
  /** Subject alternative names the serving certificate must carry. */
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
  /** A certificate (CA or serving) closer than this to its expiry is replaced. */
  renewBeforeMs: number;
  /** Lifetime of a new serving certificate, and of a new CA. */
  validityMs: number;
  caValidityMs: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** OpenKruise renews 6 months ahead of a 10-year certificate; we issue for 1 year, renew at 90 days. */
export const DEFAULT_CERTIFICATE_TIMES = {
  renewBeforeMs: 90 * DAY_MS,
  validityMs: 365 * DAY_MS,
  caValidityMs: 10 * 365 * DAY_MS,
} as const;

/** The DNS names a Service answers to inside the cluster, as certs/gen.sh and cert-manager list them. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}

export type Verdict =
  | { use: true; bundle: CertificateBundle; notAfter: Date }
  /** `ca` is set when the CA is still good and only the serving certificate must be reissued. */
  | { use: false; reason: string; ca?: { caCert: string; caKey: string } };

/**
 * Judges the Secret's data (base64 values, as the API returns them; undefined when there is no
 * Secret) against the policy at `now`.
 */
export function judgeSecretData(
  data: Readonly<Record<string, string>> | undefined,
  policy: CertificatePolicy,
  now: Date,
): Verdict {
  if (data === undefined) return { use: false, reason: 'no Secret' };
  const bundle = decodeBundle(data);
  if (typeof bundle === 'string') return { use: false, reason: bundle };
  const ca = checkCa(bundle, policy, now);
  if (typeof ca === 'string') return { use: false, reason: ca };
  const caPair = { caCert: bundle.caCert, caKey: bundle.caKey };
  const problem = checkServing(bundle, ca, policy, now);
  if (problem !== undefined) return { use: false, reason: problem, ca: caPair };
  return { use: true, bundle, notAfter: new Date(new X509Certificate(bundle.cert).validTo) };
}

function decodeBundle(data: Readonly<Record<string, string>>): CertificateBundle | string {
  const decoded: Partial<Record<keyof CertificateBundle, string>> = {};
  for (const [field, key] of Object.entries(SECRET_KEYS) as [keyof CertificateBundle, string][]) {
    const value = data[key];
    if (value === undefined || value === '') return `the Secret has no ${key}`;
    decoded[field] = Buffer.from(value, 'base64').toString('utf8');
  }
  const { caCert = '', caKey = '', cert = '', key = '' } = decoded;
  return { caCert, caKey, cert, key };
}

function checkCa(
  bundle: CertificateBundle,
  policy: CertificatePolicy,
  now: Date,
): X509Certificate | string {
  try {
    const ca = new X509Certificate(bundle.caCert);
    if (!ca.ca) return 'ca.crt is not a CA certificate';
    if (!ca.checkPrivateKey(createPrivateKey(bundle.caKey)))
      return 'ca.key is not the key of ca.crt';
    if (Date.parse(ca.validTo) - now.getTime() <= policy.renewBeforeMs) {
      return `the CA expires at ${new Date(ca.validTo).toISOString()}, within the renewal window`;
    }
    return ca;
  } catch (err) {
    return `the CA cannot be read: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function checkServing(
  bundle: CertificateBundle,
  ca: X509Certificate,
  policy: CertificatePolicy,
  now: Date,
): string | undefined {
  try {
    const cert = new X509Certificate(bundle.cert);
    if (!cert.checkPrivateKey(createPrivateKey(bundle.key)))
      return 'tls.key is not the key of tls.crt';
    if (!cert.verify(ca.publicKey)) return 'tls.crt is not signed by ca.crt';
    for (const name of policy.dnsNames) {
      if (cert.checkHost(name, { wildcards: false, subject: 'never' }) !== name) {
        return `tls.crt is not for ${name}`;
      }
    }
    for (const ip of policy.ipAddresses) {
      if (cert.checkIP(ip) === undefined) return `tls.crt is not for ${ip}`;
    }
    if (Date.parse(cert.validFrom) > now.getTime() + CLOCK_SKEW_MS)
      return 'tls.crt is not valid yet';
    if (Date.parse(cert.validTo) - now.getTime() <= policy.renewBeforeMs) {
      return `tls.crt expires at ${new Date(cert.validTo).toISOString()}, within the renewal window`;
    }
    return undefined;
  } catch (err) {
    return `tls.crt cannot be read: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Another replica's clock may run a little ahead of ours. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** The Secret's data (base64) for a bundle. */
export function secretData(bundle: CertificateBundle): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [field, key] of Object.entries(SECRET_KEYS) as [keyof CertificateBundle, string][]) {
    data[key] = Buffer.from(bundle[field]).toString('base64');
  }
  return data;
}

/** What a webhook configuration's caBundle should be: base64 of the CA's PEM. */
export function caBundleOf(bundle: CertificateBundle): string {
  return Buffer.from(bundle.caCert).toString('base64');
}

export interface WebhookEntry {
  name: string;
  clientConfig?: { caBundle?: string };
}

/**
 * A JSON patch that sets the caBundle of every webhook that lacks it, each guarded by a `test` of
 * the webhook's name so that a configuration re-applied with other webhooks in between fails the
 * patch instead of being written at the wrong index. Empty when every caBundle is right (as
 * OpenKruise's configuration.Ensure compares before it writes).
 */
export function caBundlePatch(webhooks: readonly WebhookEntry[], caBundle: string): unknown[] {
  return webhooks.flatMap((webhook, i) =>
    webhook.clientConfig?.caBundle === caBundle
      ? []
      : [
          { op: 'test', path: `/webhooks/${i}/name`, value: webhook.name },
          { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
        ],
  );
}

/** A CustomResourceDefinition, as far as its conversion webhook's caBundle goes. */
export interface ConversionHolder {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}

/**
 * The JSON patch that sets a CRD's conversion webhook caBundle (docs/adr/0015), guarded by a
 * `test` that the CRD still converts with a webhook. Empty when it is right, or when the CRD has no
 * conversion webhook to point at us.
 */
export function conversionCaBundlePatch(crd: ConversionHolder, caBundle: string): unknown[] {
  const conversion = crd.spec?.conversion;
  if (conversion?.strategy !== 'Webhook' || conversion.webhook?.clientConfig === undefined)
    return [];
  if (conversion.webhook.clientConfig.caBundle === caBundle) return [];
  return [
    { op: 'test', path: '/spec/conversion/strategy', value: 'Webhook' },
    { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle },
  ];
}

/**
 * A new serving certificate for the policy's names, signed by `ca` when given (renewal keeps the
 * CA, and so the caBundle), else by a new CA. EC P-256 keys. Also makes the development
 * certificate (ensureDevCertificates in src/server/tls.ts).
 */
export async function issueBundle(
  policy: CertificatePolicy,
  now: Date,
  ca?: { caCert: string; caKey: string },
): Promise<CertificateBundle> {
  const authority = ca ?? (await newCa(now, policy.caValidityMs));
  const { generate } = await import('selfsigned');
  const serving = await generate(
    [{ name: 'commonName', value: policy.dnsNames[0] ?? 'sidecarset-webhook' }],
    {
      keyType: 'ec',
      algorithm: 'sha256',
      notBeforeDate: now,
      notAfterDate: new Date(now.getTime() + policy.validityMs),
      ca: { key: authority.caKey, cert: authority.caCert },
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            ...policy.dnsNames.map((value) => ({ type: 2 as const, value })),
            ...policy.ipAddresses.map((ip) => ({ type: 7 as const, ip })),
          ],
        },
      ],
    },
  );
  return { ...authority, cert: serving.cert, key: serving.private };
}

async function newCa(now: Date, validityMs: number): Promise<{ caCert: string; caKey: string }> {
  // A name of its own: TLS clients find the issuer by name.
  const name = `sidecarset CA ${randomBytes(4).toString('hex')}`;
  const { generate } = await import('selfsigned');
  const ca = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + validityMs),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      {
        name: 'keyUsage',
        keyCertSign: true,
        cRLSign: true,
        digitalSignature: true,
        critical: true,
      },
    ],
  });
  return { caCert: ca.cert, caKey: ca.private };
}
