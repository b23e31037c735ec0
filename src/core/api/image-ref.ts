/**
 * Enough of the container image reference grammar (github.com/distribution/reference, which
 * Kubernetes' parsers.ParseImageName uses) to default imagePullPolicy as SetDefaults_Container
 * does: Always when the tag is "latest" or there is neither tag nor digest, IfNotPresent
 * otherwise, including for a reference that does not parse (Kubernetes ignores the error and
 * reads the empty tag).
 */

const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const REMOTE_NAME = `${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[(?:[a-fA-F0-9:]+)\\])`;
const DOMAIN_AND_PORT = `${HOST}(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';

/** distribution/reference's ReferenceRegexp, anchored: groups name, tag, digest. */
export const REFERENCE = new RegExp(
  `^((?:${DOMAIN_AND_PORT}/)?${REMOTE_NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);
const ANCHORED_NAME = new RegExp(`^(?:(${DOMAIN_AND_PORT})/)?(${REMOTE_NAME})$`);
const IDENTIFIER = /^[a-f0-9]{64}$/;
/** reference.NameTotalLengthMax. */
export const NAME_TOTAL_LENGTH_MAX = 255;
/** Algorithms Kubernetes registers (crypto/sha256, crypto/sha512): their encoded form. */
const DIGEST_ENCODED: Readonly<Record<string, RegExp>> = {
  sha256: /^[a-f0-9]{64}$/,
  sha384: /^[a-f0-9]{96}$/,
  sha512: /^[a-f0-9]{128}$/,
};

interface ImageReference {
  tag: string;
  digest: string;
}

/** splitDockerDomain: the domain, if the first path element looks like one, else docker.io. */
function splitDomain(name: string): [string, string] {
  const slash = name.indexOf('/');
  if (slash === -1) return ['docker.io', `library/${name}`];
  const first = name.slice(0, slash);
  const rest = name.slice(slash + 1);
  let domain = 'docker.io';
  let remote = name;
  if (
    first === 'localhost' ||
    /[.:]/.test(first) ||
    first.toLowerCase() !== first ||
    first === 'index.docker.io'
  ) {
    domain = first === 'index.docker.io' ? 'docker.io' : first;
    remote = rest;
  }
  if (domain === 'docker.io' && !remote.includes('/')) remote = `library/${remote}`;
  return [domain, remote];
}

/** go-digest's Parse: a registered algorithm and exactly its length of lowercase hex. */
export function validDigest(digest: string): boolean {
  const colon = digest.indexOf(':');
  const algorithm = digest.slice(0, colon);
  const encoded = Object.hasOwn(DIGEST_ENCODED, algorithm) ? DIGEST_ENCODED[algorithm] : undefined;
  return encoded?.test(digest.slice(colon + 1)) === true;
}

/** ParseNormalizedNamed's tag and digest, or undefined where it returns an error. */
function parseImageReference(image: string): ImageReference | undefined {
  if (IDENTIFIER.test(image)) return undefined;
  const [domain, remainder] = splitDomain(image);
  const colon = remainder.indexOf(':');
  const remote = colon === -1 ? remainder : remainder.slice(0, colon);
  if (remote.toLowerCase() !== remote) return undefined;
  const match = REFERENCE.exec(`${domain}/${remainder}`);
  if (match === null) return undefined;
  const path = ANCHORED_NAME.exec(match[1] ?? '')?.[2] ?? '';
  if (path.length > NAME_TOTAL_LENGTH_MAX) return undefined;
  const tag = match[2] ?? '';
  const digest = match[3] ?? '';
  if (digest !== '' && !validDigest(digest)) return undefined;
  return { tag, digest };
}

/** SetDefaults_Container's imagePullPolicy for an unset policy. */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const ref = parseImageReference(image);
  if (ref === undefined) return 'IfNotPresent';
  const tag = ref.tag === '' && ref.digest === '' ? 'latest' : ref.tag;
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}
