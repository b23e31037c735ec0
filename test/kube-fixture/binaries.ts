/**
 * Where the cluster's binaries come from: `build.sh` in this folder builds kube-apiserver,
 * kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl of one Kubernetes
 * version from its Go module (kubernetes/MINOR/), with etcd beside them (cached per version, go.mod
 * + go.sum + Go version), or `KUBE_FIXTURE_BIN` names a folder that already holds them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { access, constants, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Binaries {
  readonly dir: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubelet: string;
  readonly kubeProxy: string;
  readonly etcd: string;
  readonly kubectl: string;
}

/** Either the binaries, or why there are none (only outside CI: there a missing toolchain throws). */
export type BinariesOrSkip = { binaries: Binaries } | { skip: string };

const BUILD_SCRIPT = new URL('./build.sh', import.meta.url).pathname;

/** `1.30` before `1.4`: minor versions in numeric order. */
const byMinor = (a: string, b: string): number =>
  Number(a.split('.')[1] ?? 0) - Number(b.split('.')[1] ?? 0);

/**
 * The Kubernetes minor versions the tests build and run, oldest first (the folders of
 * kubernetes/, each pinning one patch release).
 */
export const KUBERNETES_VERSIONS: readonly string[] = readdirSync(
  new URL('./kubernetes/', import.meta.url),
).sort(byMinor);

/** The newest: what a cluster runs unless told otherwise. */
export const NEWEST_KUBERNETES = KUBERNETES_VERSIONS.at(-1) ?? '';

/** The patch release `minor` is built from (`v1.33.13`): its go.mod's k8s.io/kubernetes. */
export async function pinnedKubernetes(minor: string): Promise<string> {
  const goMod = await readFile(new URL(`./kubernetes/${minor}/go.mod`, import.meta.url), 'utf8');
  const version = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(goMod)?.[1];
  if (version === undefined)
    throw new Error(`kubernetes/${minor}/go.mod names no k8s.io/kubernetes`);
  return version;
}

export function binariesIn(dir: string): Binaries {
  return {
    dir,
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeScheduler: join(dir, 'kube-scheduler'),
    kubelet: join(dir, 'kubelet'),
    kubeProxy: join(dir, 'kube-proxy'),
    etcd: join(dir, 'etcd'),
    kubectl: join(dir, 'kubectl'),
  };
}

export async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function goInstalled(): boolean {
  return spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
}

/** Runs a build.sh (its progress goes to our stderr) and returns the folder it printed. */
export function runBuildScript(
  script: string = BUILD_SCRIPT,
  args: readonly string[] = [],
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const dir = out.trim().split('\n').pop() ?? '';
      if (code === 0 && dir !== '') resolve(dir);
      else reject(new Error(`${script} failed (exit ${String(code)})`));
    });
  });
}

/**
 * The binaries for the real control plane of Kubernetes `minor` (the newest by default;
 * `KUBE_FIXTURE_BIN` stands for the newest only). With `CI=true` anything missing is an error;
 * elsewhere a machine without Go gets a reason to skip.
 */
export async function controlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env,
  minor: string = NEWEST_KUBERNETES,
): Promise<BinariesOrSkip> {
  if (!KUBERNETES_VERSIONS.includes(minor)) {
    throw new Error(
      `Kubernetes ${minor} is not built here; test/kube-fixture/kubernetes/ has ${KUBERNETES_VERSIONS.join(', ')}`,
    );
  }
  const given = env['KUBE_FIXTURE_BIN'];
  if (given !== undefined && given !== '' && minor === NEWEST_KUBERNETES) {
    const binaries = binariesIn(given);
    const { kubeApiserver, kubeControllerManager, kubeScheduler, kubelet, kubeProxy } = binaries;
    for (const path of [
      kubeApiserver,
      kubeControllerManager,
      kubeScheduler,
      kubelet,
      kubeProxy,
      binaries.etcd,
      binaries.kubectl,
    ]) {
      if (!(await executable(path))) throw new Error(`KUBE_FIXTURE_BIN: ${path} is not executable`);
    }
    return { binaries };
  }
  if (!goInstalled()) {
    const reason =
      'Go is not installed: the e2e tests build kube-apiserver and etcd with it (test/kube-fixture)';
    if (env['CI'] === 'true') throw new Error(`${reason}; CI=true requires them`);
    return { skip: reason };
  }
  return { binaries: binariesIn(await runBuildScript(BUILD_SCRIPT, [minor])) };
}
