/**
 * A real Kubernetes control plane for tests, as controller-runtime's envtest runs one: etcd and the
 * stock kube-apiserver (built by build.sh) on free loopback ports, RBAC authorization, an admin
 * bearer token, service-account signing keys (so tests can mint ServiceAccount tokens with the
 * TokenRequest API), and an audit log of every request a ServiceAccount makes.
 *
 * By default there is no controller-manager, scheduler or kubelet: pods stay Pending unless a test
 * reports their status (test/support/api-kubelet.ts), nothing creates `default` ServiceAccounts
 * (createNamespace does), and deleted namespaces stay Terminating. With `controllers: true` the
 * stock kube-controller-manager and kube-scheduler run too, so Deployments, ReplicaSets, Jobs,
 * ServiceAccounts, garbage collection and namespace deletion behave as in any cluster; a node
 * (test/node-fixture) then runs the pods.
 *
 * With `network: true` (what a node needs) the whole cluster runs in a network namespace of its own
 * (network.ts): pods get addresses on a bridge there and Services work, and the host reaches the
 * API server through a forward on 127.0.0.1, at the same URL as inside.
 *
 * Every child process is started with the parent-death signal set (util-linux `setpriv
 * --pdeathsig`), so a test process that dies, however it dies, takes its control plane with it.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { DEFAULT_CERTIFICATE_TIMES, issueBundle } from '../../src/server/cert-plan.js';
import type { Binaries } from './binaries.js';
import type { ClusterNetwork } from './network.js';
import { NODE_IP, SERVICE_CIDR, startClusterNetwork } from './network.js';

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  readonly url: string;
  /** The folder holding etcd's data, the keys, the logs and the kubeconfigs; removed by stop(). */
  readonly dir: string;
  /** The CA a client must trust to reach the API server (PEM). */
  readonly caPem: string;
  /** The cluster's own network namespace (with `network: true`). */
  readonly network: ClusterNetwork | undefined;
  /** A kubeconfig file for the admin (group system:masters). */
  readonly adminKubeconfig: string;
  /**
   * One JSON audit event per line for every request made by a ServiceAccount (with the request
   * body for pod writes).
   */
  readonly auditLog: string;
  readonly binaries: Binaries;
  /** The admin's KubeConfig. */
  kubeConfig(): KubeConfig;
  /** A namespace with the `default` ServiceAccount that pods need (no controller makes it here). */
  createNamespace(name: string, labels?: Record<string, string>): Promise<void>;
  /** A token for the ServiceAccount, from the TokenRequest API. */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  /** Writes a kubeconfig file that authenticates with `token`; returns its path. */
  writeKubeconfig(fileName: string, token: string): Promise<string>;
  /** Runs the real kubectl, as the admin unless `kubeconfig` says otherwise. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /** The API server's /version gitVersion. */
  version(): Promise<string>;
  /**
   * Stops the API server (SIGTERM, as a rolling update of the control plane does), waits
   * `downMs`, and starts it again with the same flags, port, certificates and etcd. Resolves once
   * the new one's /readyz answers 200, with when (Date.now()) it stopped and when it was ready
   * (polled every 100 ms, so at most that late).
   */
  restartApiServer(options?: { downMs?: number }): Promise<{ stoppedAt: number; readyAt: number }>;
  stop(): Promise<void>;
}

export interface KubectlOptions {
  readonly input?: string;
  readonly kubeconfig?: string;
}

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ControlPlaneOptions {
  readonly binaries: Binaries;
  /** How long each component may take to become ready (default 90 s). */
  readonly startTimeoutMs?: number;
  /** Also kube-controller-manager and kube-scheduler (default false). */
  readonly controllers?: boolean;
  /**
   * In a network namespace of its own, as a node needs (default false: everything on the host's
   * 127.0.0.1, no Services).
   */
  readonly network?: boolean;
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  # Writes to pods with their bodies: a test can count the sidecar upgrades each pod received.
  - level: Request
    userGroups: ['system:serviceaccounts']
    verbs: [patch, update]
    resources: [{ group: '', resources: [pods] }]
  - level: Metadata
    userGroups: ['system:serviceaccounts']
  - level: None
`;

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  try {
    return await startOnce(options);
  } catch (err) {
    // Ports are picked free, then handed to the children: another process can take one in between.
    if (err instanceof PortTakenError) return startOnce(options);
    throw err;
  }
}

class PortTakenError extends Error {}

function setprivAvailable(): boolean {
  return spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
}

const useSetpriv = setprivAvailable();

/**
 * The command and arguments that run `binary` so that it dies with this process: util-linux
 * `setpriv --pdeathsig SIGKILL` where it exists (every Debian), else the binary as it is.
 */
export function diesWithParent(binary: string, args: readonly string[]): [string, string[]] {
  return useSetpriv
    ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', binary, ...args]]
    : [binary, [...args]];
}

/** Free TCP ports on 127.0.0.1, all held open until every one is chosen so none repeats. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            resolve(server);
          });
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
}

/** Starts `binary`, its output in DIR/NAME.log, to die with this process. */
export function startChild(
  name: string,
  binary: string,
  args: readonly string[],
  dir: string,
  env?: NodeJS.ProcessEnv,
): Child {
  const logFile = join(dir, `${name}.log`);
  const log = createWriteStream(logFile);
  const [command, argv] = diesWithParent(binary, args);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      log.end();
      resolve(code);
    });
    child.on('error', () => {
      log.end();
      resolve(null);
    });
  });
  return { name, process: child, logFile, exited };
}

export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

export async function tail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** GET over HTTPS without verifying the server (used only before its CA is known). */
function probe(url: string, token?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        rejectUnauthorized: false,
        agent: false,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        timeout: 2000,
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, text });
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => {
      resolve({ status: 0, text: '' });
    });
    req.end();
  });
}

async function plainGet(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return await response.text();
  } catch {
    return '';
  }
}

/** Polls `ready` until it holds; fails early, with the log's tail, if `child` exits. */
export async function waitReady(
  child: Child,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const state = { exited: false };
  void child.exited.then(() => {
    state.exited = true;
  });
  while (!(await ready())) {
    const { exited } = state;
    if (exited || Date.now() > deadline) {
      const log = await tail(child.logFile);
      if (/address already in use/.test(log)) throw new PortTakenError(`${child.name}: ${log}`);
      throw new Error(
        `${child.name} ${exited ? 'exited' : `was not ready after ${timeoutMs} ms`}:\n${log}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function kubeconfigYaml(server: string, caPem: string, token: string): string {
  const ca = Buffer.from(caPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: kube-fixture',
    `    cluster: { server: '${server}', certificate-authority-data: '${ca}' }`,
    'users:',
    '  - name: kube-fixture-user',
    `    user: { token: '${token}' }`,
    'contexts:',
    '  - name: kube-fixture',
    '    context: { cluster: kube-fixture, user: kube-fixture-user, namespace: default }',
    'current-context: kube-fixture',
    '',
  ].join('\n');
}

const DIR_PREFIX = 'kube-fixture-';

/**
 * Folders left by control planes whose owner died without stop() (their processes died with it):
 * each folder names its owner's pid.
 */
async function removeAbandoned(): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = Number(await readFile(join(dir, 'owner.pid'), 'utf8').catch(() => ''));
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { binaries } = options;
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  await removeAbandoned();
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await writeFile(join(dir, 'owner.pid'), String(process.pid));
  const children: Child[] = [];
  let network: ClusterNetwork | undefined;
  const stopAll = async (): Promise<void> => {
    // The API server first: it holds connections to etcd.
    for (const child of [...children].reverse()) await stopChild(child, 5000);
    await network?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (options.network === true) {
      network = await startClusterNetwork(dir, (path, text) => writeFile(path, text));
    }
    /** The command that runs `binary` where the cluster runs. */
    const placed = (binary: string, args: readonly string[]): [string, readonly string[]] =>
      network?.inside(binary, args) ?? [binary, args];
    /** Starts a component where the cluster runs, and makes its port reachable from here. */
    const start = async (
      name: string,
      binary: string,
      args: readonly string[],
      port: number,
    ): Promise<Child> => {
      await network?.forward(port);
      return startChild(name, ...placed(binary, args), dir);
    };
    const [etcdClient, etcdPeer, apiPort] = (await freePorts(3)) as [number, number, number];
    const adminToken = randomBytes(24).toString('hex');
    const keys = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await mkdir(join(dir, 'pki'));
    // The API server's certificate names every way it is reached: 127.0.0.1 on both sides of the
    // forward, the node's address and the `kubernetes` Service inside the namespace.
    const tls = await issueBundle(
      {
        dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        ipAddresses: ['127.0.0.1', NODE_IP, '10.0.0.1'],
        ...DEFAULT_CERTIFICATE_TIMES,
      },
      new Date(),
    );
    await Promise.all([
      writeFile(join(dir, 'pki', 'ca.crt'), tls.caCert),
      writeFile(join(dir, 'pki', 'apiserver.crt'), tls.cert),
      writeFile(join(dir, 'pki', 'apiserver.key'), tls.key, { mode: 0o600 }),
      writeFile(join(dir, 'tokens.csv'), `${adminToken},admin,admin,"system:masters"\n`),
      writeFile(join(dir, 'sa.key'), keys.privateKey, { mode: 0o600 }),
      writeFile(join(dir, 'sa.pub'), keys.publicKey),
      writeFile(join(dir, 'audit-policy.yaml'), AUDIT_POLICY),
    ]);

    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    const etcd = await start(
      'etcd',
      binaries.etcd,
      [
        '--name=kube-fixture',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=kube-fixture=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=error',
      ],
      etcdClient,
    );
    children.push(etcd);
    await waitReady(
      etcd,
      async () => (await plainGet(`${etcdUrl}/health`)).includes('"health":"true"'),
      timeoutMs,
    );

    const url = `https://127.0.0.1:${apiPort}`;
    const auditLog = join(dir, 'audit.log');
    const where =
      network === undefined
        ? [
            '--bind-address=127.0.0.1',
            // Without it the API server looks for a default route to advertise, and a host
            // without one refuses to start; a loopback address cannot back the `kubernetes`
            // Service, hence no endpoint reconciler.
            '--advertise-address=127.0.0.1',
            '--endpoint-reconciler-type=none',
          ]
        : [
            // Every address of the namespace: 127.0.0.1 (the forward, the node) and the node's
            // (the `kubernetes` Service's endpoint, which pods reach).
            '--bind-address=0.0.0.0',
            `--advertise-address=${NODE_IP}`,
            `--egress-selector-config-file=${network.egressConfig}`,
            // `kubectl logs` and `exec` dial the node's address, not its name: nothing resolves it.
            '--kubelet-preferred-address-types=InternalIP',
          ];
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      ...where,
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${join(dir, 'pki', 'apiserver.crt')}`,
      `--tls-private-key-file=${join(dir, 'pki', 'apiserver.key')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--authorization-mode=RBAC',
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--allow-privileged=true',
      `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
      '--profiling=false',
    ];
    const apiserverReady = async (): Promise<boolean> =>
      (await probe(`${url}/readyz`, adminToken)).status === 200;
    let apiserver = await start('kube-apiserver', binaries.kubeApiserver, apiserverArgs, apiPort);
    children.push(apiserver);
    await waitReady(apiserver, apiserverReady, timeoutMs);
    let restarts = 0;
    const caPem = tls.caCert;
    const adminKubeconfig = join(dir, 'admin.kubeconfig');
    await writeFile(adminKubeconfig, kubeconfigYaml(url, caPem, adminToken), { mode: 0o600 });

    const kubeConfig = (): KubeConfig => {
      const kc = new KubeConfig();
      kc.loadFromFile(adminKubeconfig);
      return kc;
    };
    const core = kubeConfig().makeApiClient(CoreV1Api);

    const plane: ControlPlane = {
      url,
      dir,
      caPem,
      network,
      adminKubeconfig,
      auditLog,
      binaries,
      kubeConfig,
      async createNamespace(name, labels = {}) {
        await core.createNamespace({ body: { metadata: { name, labels } } });
        await ensureDefaultServiceAccount(core, name);
      },
      async serviceAccountToken(namespace, name) {
        const review = await core.createNamespacedServiceAccountToken({
          namespace,
          name,
          body: { spec: { audiences: [], expirationSeconds: 3600 } },
        });
        return review.status?.token ?? '';
      },
      async writeKubeconfig(fileName, token) {
        const file = join(dir, fileName);
        await writeFile(file, kubeconfigYaml(url, caPem, token), { mode: 0o600 });
        return file;
      },
      kubectl: (args, kubectlOptions = {}) =>
        runKubectl(
          binaries.kubectl,
          args,
          kubectlOptions.kubeconfig ?? adminKubeconfig,
          kubectlOptions.input,
        ),
      async version() {
        const text = (await probe(`${url}/version`, adminToken)).text;
        return (JSON.parse(text) as { gitVersion: string }).gitVersion;
      },
      async restartApiServer(restartOptions = {}) {
        await stopChild(apiserver, 5000);
        const stoppedAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, restartOptions.downMs ?? 0));
        restarts++;
        // Same flags, certificates and port (whose forward stays), the audit log appended.
        const next = startChild(
          `kube-apiserver-${restarts}`,
          ...placed(binaries.kubeApiserver, apiserverArgs),
          dir,
        );
        children[children.indexOf(apiserver)] = next;
        apiserver = next;
        await waitReady(apiserver, apiserverReady, timeoutMs, 100);
        return { stoppedAt, readyAt: Date.now() };
      },
      stop: stopAll,
    };
    // Namespace `default` is made by the API server itself once it runs; pods there need the
    // `default` ServiceAccount, which only a controller-manager would make.
    await waitFor(async () => {
      try {
        await core.readNamespace({ name: 'default' });
        return true;
      } catch {
        return false;
      }
    }, timeoutMs);
    await ensureDefaultServiceAccount(core, 'default');
    if (options.controllers === true) {
      const [managerPort, schedulerPort] = (await freePorts(2)) as [number, number];
      const common = [
        `--kubeconfig=${adminKubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        '--profiling=false',
      ];
      const manager = await start(
        'kube-controller-manager',
        binaries.kubeControllerManager,
        [
          ...common,
          `--secure-port=${managerPort}`,
          // ServiceAccount tokens for pods, signed as the API server verifies them, and the
          // kube-root-ca.crt ConfigMap in every namespace.
          `--service-account-private-key-file=${join(dir, 'sa.key')}`,
          `--root-ca-file=${join(dir, 'pki', 'ca.crt')}`,
          // Default /usr/libexec/kubernetes/kubelet-plugins/volume/exec, which it would create.
          `--flex-volume-plugin-dir=${join(dir, 'flex-volume-plugins')}`,
        ],
        managerPort,
      );
      children.push(manager);
      const scheduler = await start(
        'kube-scheduler',
        binaries.kubeScheduler,
        [...common, `--secure-port=${schedulerPort}`],
        schedulerPort,
      );
      children.push(scheduler);
      const healthy = (port: number) => async () =>
        (await probe(`https://127.0.0.1:${port}/healthz`)).status === 200;
      await waitReady(manager, healthy(managerPort), timeoutMs);
      await waitReady(scheduler, healthy(schedulerPort), timeoutMs);
    }
    return plane;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The `default` ServiceAccount of a namespace, which pods need: made here unless the
 * controller-manager made it first.
 */
async function ensureDefaultServiceAccount(core: CoreV1Api, namespace: string): Promise<void> {
  try {
    await core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: 'default' } },
    });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runKubectl(
  kubectl: string,
  args: readonly string[],
  kubeconfig: string,
  input: string | undefined,
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectl, [`--kubeconfig=${kubeconfig}`, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its discovery cache beside the kubeconfig, not in ~/.kube.
      env: { ...process.env, KUBECACHEDIR: join(dirname(kubeconfig), 'kubectl-cache') },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
