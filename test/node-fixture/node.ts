/**
 * A real node for the real control plane (test/kube-fixture with `controllers: true` and
 * `network: true`): the stock kubelet and kube-proxy, containerd 2 and Debian's runc, registered as
 * one Node, running pods from images loaded with `loadImage` (nothing is pulled: every registry
 * points at 127.0.0.1:1). What it needs and why, and how it differs from the test kubelet:
 * test/node-fixture/README.md.
 *
 * The host is shared, so the node keeps to itself:
 * - containerd and the kubelet run in a private mount namespace (namespace.sh) where /run, /var/lib
 *   and /var/log are its own and the machine-wide sysctls the kubelet would set already look set;
 * - its pods' cgroups live below a cgroup root of its own (host.ts), removed when it stops;
 * - it runs in the cluster's network namespace (test/kube-fixture/network.ts): the Node's address
 *   is on the bridge its pods are attached to (the CNI bridge plugin, host-local addresses), and
 *   kube-proxy's iptables rules, in that namespace only, make the Services' ClusterIPs work. The
 *   kubelet's port is open to the API server there (`kubectl logs`, `exec`); pods may also use the
 *   node's network (`hostNetwork: true`), which is that namespace too.
 *
 * Every process dies with this one (the parent-death signal). A run killed half-way leaves a
 * scratch folder naming its dead owner, and shims and containers that outlived it: the next
 * startNode removes them, with the cgroups.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Node } from '@kubernetes/client-node';

import type { Child, ControlPlane } from '../kube-fixture/control-plane.js';
import type { ClusterNetwork } from '../kube-fixture/network.js';
import { NODE_IP, POD_CIDR } from '../kube-fixture/network.js';
import {
  alive,
  freePorts,
  startChild,
  stopChild,
  waitFor,
  waitReady,
} from '../kube-fixture/control-plane.js';
import type { NodeBinaries } from './binaries.js';
import {
  cgroupRootsNamed,
  createCgroupRoot,
  killProcessesMentioning,
  removeCgroupRoot,
} from './host.js';
import { buildTestImages, PAUSE_IMAGE, runTool } from './images.js';

export interface NodeOptions {
  /** A control plane started with `controllers: true` (the node lifecycle controller untaints it). */
  readonly plane: ControlPlane;
  readonly binaries: NodeBinaries;
  /** The kubelet, of the control plane's version (test/kube-fixture builds it). */
  readonly kubelet: string;
  /** kube-proxy, of the same version. */
  readonly kubeProxy: string;
  /** The Node's name (default `sidecarset-node`). */
  readonly name?: string;
  /** How long each step may take (default 120 s). */
  readonly startTimeoutMs?: number;
}

/** What `ctr` needs to reach the node's containerd: enough to load an image from another process. */
export interface NodeRuntime {
  /** The process holding the node's mount namespace. */
  readonly namespacePid: number;
  readonly ctr: string;
  /** containerd's socket. */
  readonly address: string;
}

export interface KubeNode {
  readonly name: string;
  /** The node's scratch folder: state, logs, configuration; removed by stop(). */
  readonly dir: string;
  readonly runtime: NodeRuntime;
  /** Imports an OCI or docker image archive, as `kind load image-archive` does. */
  loadImage(archive: string): Promise<void>;
  /** Gives an image on the node a second name (both as containerd stores them: docker.io/…). */
  tagImage(source: string, target: string): Promise<void>;
  /**
   * A container's log lines (without the CRI timestamp and stream), every run of it in order:
   * `runs[0]` is the first start, `runs[n]` the n-th restart.
   */
  containerLogs(namespace: string, pod: string, container: string): Promise<string[][]>;
  /**
   * A cgroup v1 file of a running container (`cpu.cfs_quota_us`, `memory.limit_in_bytes`…), in
   * the hierarchy its name starts with; `containerID` as a status reports it (`containerd://…`).
   */
  containerCgroupFile(containerID: string, file: string): Promise<string>;
  stop(): Promise<void>;
}

const DIR_PREFIX = 'node-fixture-';
const CGROUP_PREFIX = 'sidecarset-node-';
const NAMESPACE_SCRIPT = new URL('./namespace.sh', import.meta.url).pathname;
/** An address where nothing listens: every registry points there, so a pull fails at once. */
const NO_REGISTRY = 'http://127.0.0.1:1';

function containerdConfig(dir: string, binaries: NodeBinaries): string {
  return `# containerd 2 (configuration version 3), every path in the node's scratch folder.
version = 3
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
# NRI would make /var/run/nri; nothing here needs it.
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = "${dir}/run/containerd.sock"

[ttrpc]
  address = "${dir}/run/containerd.sock.ttrpc"

[plugins]
  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = "${dir}/run/s"

  [plugins.'io.containerd.internal.v1.opt']
    path = "${dir}/containerd/opt"

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "${PAUSE_IMAGE}"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "${dir}/registries"

  [plugins.'io.containerd.cri.v1.runtime']
    # Without CAP_SYS_RESOURCE (missing from some machines' bounding set) runc cannot lower
    # oom_score_adj, and every pod sandbox asks for -998: keep each container's at or above
    # containerd's own, or no sandbox ever starts.
    restrict_oom_score_adj = true
    cdi_spec_dirs = ["${dir}/cdi"]
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "${binaries.runc}"
          Root = "${dir}/run/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["${binaries.cniDir}"]
      conf_dir = "${dir}/cni"

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
`;
}

interface KubeletPorts {
  readonly port: number;
  readonly healthz: number;
}

function kubeletConfig(dir: string, cgroupRoot: string, ports: KubeletPorts): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The machines this runs on have cgroup v1 (hybrid); the kubelet refuses it unless told so.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /${cgroupRoot}
containerRuntimeEndpoint: unix://${dir}/run/containerd.sock
podLogsDir: ${dir}/pod-logs
volumePluginDir: ${dir}/volume-plugins
# In the cluster's namespace only: the API server calls in for logs, exec and port-forward, without
# a client certificate.
address: 0.0.0.0
port: ${ports.port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${ports.healthz}
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
authorization:
  mode: AlwaysAllow
failSwapOn: false
# A shared machine: never evict pods or remove images because of its disk or memory.
evictionHard: { memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
fileCheckFrequency: 5s
# No name server: nothing in the namespace answers, and nothing outside it is reachable.
resolvConf: ${dir}/resolv.conf
`;
}

/**
 * The pod network: pods on the bridge the namespace already has (network-namespace.ts), addresses
 * from the node's range, the node's address as their gateway; hairpin, so that a pod reaches
 * itself through its own Service.
 */
function cniConfig(dir: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'sidecarset-node',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: `${dir}/cni-ipam`,
        },
      },
    ],
  });
}

/**
 * kube-proxy in iptables mode, every Service connection masqueraded: without br_netfilter, a pod
 * answering another pod on the same bridge would otherwise bypass the translation back. The
 * conntrack limits are machine-wide: left as they are.
 */
function kubeProxyConfig(options: {
  kubeconfig: string;
  name: string;
  healthz: number;
  metrics: number;
}): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: ${options.kubeconfig} }
hostnameOverride: ${options.name}
mode: iptables
clusterCIDR: ${POD_CIDR}
healthzBindAddress: 127.0.0.1:${options.healthz}
metricsBindAddress: 127.0.0.1:${options.metrics}
iptables: { masqueradeAll: true, localhostNodePorts: false, syncPeriod: 30s, minSyncPeriod: 0s }
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
`;
}

async function healthy(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
      signal: AbortSignal.timeout(2000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

/** `ctr` inside the node's mount namespace (where containerd mounts what it unpacks). */
function ctr(runtime: NodeRuntime, args: readonly string[]): Promise<string> {
  return runTool('nsenter', [
    '-t',
    String(runtime.namespacePid),
    '-m',
    '--',
    runtime.ctr,
    '--address',
    runtime.address,
    '-n',
    'k8s.io',
    ...args,
  ]);
}

/** Imports an image archive into the node's containerd, where the kubelet finds it. */
export async function loadImageArchive(runtime: NodeRuntime, archive: string): Promise<void> {
  await ctr(runtime, ['images', 'import', '--local', archive]);
}

/** Messages of a CRI log file ("TIME STREAM TAG MESSAGE" lines). */
function logMessages(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(' ').slice(3).join(' '));
}

/** Scratch folders and cgroup roots of nodes whose owner died without stop(). */
async function removeAbandoned(): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = Number(await readFile(join(dir, 'owner.pid'), 'utf8').catch(() => ''));
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    await killProcessesMentioning(dir);
    await rm(dir, { recursive: true, force: true });
  }
  for (const name of await cgroupRootsNamed(CGROUP_PREFIX)) {
    const owner = Number(name.slice(CGROUP_PREFIX.length).split('-')[0]);
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) await removeCgroupRoot(name);
  }
}

function nodeReady(node: V1Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const tainted = (node.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/not-ready');
  return ready && !tainted;
}

export async function startNode(options: NodeOptions): Promise<KubeNode> {
  const { plane, binaries } = options;
  const network: ClusterNetwork | undefined = plane.network;
  if (network === undefined) {
    throw new Error('a node needs the control plane started with `network: true`');
  }
  const name = options.name ?? 'sidecarset-node';
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  await removeAbandoned();
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await writeFile(join(dir, 'owner.pid'), String(process.pid));
  const cgroupRoot = `${CGROUP_PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  const started: { namespace?: Child; containerd?: Child; kubelet?: Child; kubeProxy?: Child } = {};
  const stop = async (): Promise<void> => {
    // The kubelet first, so that it restarts nothing; then the containers and their shims, which
    // outlive containerd; then containerd and the namespace.
    const { namespace, containerd, kubelet, kubeProxy } = started;
    if (kubelet !== undefined) await stopChild(kubelet, 5000);
    if (kubeProxy !== undefined) await stopChild(kubeProxy, 5000);
    await removeCgroupRoot(cgroupRoot);
    await killProcessesMentioning(dir);
    if (containerd !== undefined) await stopChild(containerd, 5000);
    if (namespace !== undefined) await stopChild(namespace, 1000);
    await removeCgroupRoot(cgroupRoot);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      [
        'run',
        'containerd',
        'cni',
        'cni-ipam',
        'cdi',
        'pod-logs',
        'images',
        'registries/_default',
      ].map((d) => mkdir(join(dir, d), { recursive: true })),
    );
    await Promise.all([
      writeFile(join(dir, 'containerd.toml'), containerdConfig(dir, binaries)),
      writeFile(join(dir, 'cni', '10-bridge.conflist'), cniConfig(dir)),
      writeFile(join(dir, 'resolv.conf'), '# no name server in the test cluster\n'),
      writeFile(join(dir, 'registries', '_default', 'hosts.toml'), `server = "${NO_REGISTRY}"\n`),
    ]);
    await createCgroupRoot(cgroupRoot);

    // A mount namespace of its own, in the cluster's network namespace.
    const namespace = startChild(
      'namespace',
      ...network.inside('unshare', [
        '--mount',
        '--propagation',
        'private',
        '--',
        'bash',
        NAMESPACE_SCRIPT,
        dir,
      ]),
      dir,
    );
    started.namespace = namespace;
    const namespaceLog = join(dir, 'namespace.log');
    await waitReady(
      namespace,
      async () => (await readFile(namespaceLog, 'utf8').catch(() => '')).includes('ready'),
      timeoutMs,
    );
    const namespacePid = namespace.process.pid;
    if (namespacePid === undefined) throw new Error('the namespace process has no pid');
    const inNamespace = (binary: string, args: readonly string[]): string[] => [
      '-t',
      String(namespacePid),
      '-m',
      '-n',
      '--',
      binary,
      ...args,
    ];
    const runtime: NodeRuntime = {
      namespacePid,
      ctr: binaries.ctr,
      address: join(dir, 'run', 'containerd.sock'),
    };

    // containerd finds its shim, and the shim runc, on PATH.
    const path = [binaries.dir, dirname(binaries.runc), process.env['PATH'] ?? ''].join(':');
    const containerd = startChild(
      'containerd',
      'nsenter',
      inNamespace(binaries.containerd, ['--config', join(dir, 'containerd.toml')]),
      dir,
      { ...process.env, PATH: path },
    );
    started.containerd = containerd;
    await waitReady(
      containerd,
      () =>
        ctr(runtime, ['version']).then(
          () => true,
          () => false,
        ),
      timeoutMs,
    );
    const images = await buildTestImages(binaries, join(dir, 'images'));
    for (const archive of images) await loadImageArchive(runtime, archive);

    const [port, healthz, proxyHealthz, proxyMetrics] = (await freePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    await network.forward(healthz);
    await network.forward(proxyHealthz);
    await writeFile(join(dir, 'kubelet.yaml'), kubeletConfig(dir, cgroupRoot, { port, healthz }));
    await writeFile(
      join(dir, 'kube-proxy.yaml'),
      kubeProxyConfig({
        kubeconfig: plane.adminKubeconfig,
        name,
        healthz: proxyHealthz,
        metrics: proxyMetrics,
      }),
    );
    const kubelet = startChild(
      'kubelet',
      'nsenter',
      inNamespace(options.kubelet, [
        `--config=${join(dir, 'kubelet.yaml')}`,
        `--kubeconfig=${plane.adminKubeconfig}`,
        '--root-dir=/var/lib/kubelet',
        `--hostname-override=${name}`,
        `--node-ip=${NODE_IP}`,
        '--v=1',
      ]),
      dir,
      { ...process.env, PATH: path },
    );
    started.kubelet = kubelet;
    await waitReady(kubelet, () => healthy(healthz), timeoutMs);
    // In the node's mount namespace too: iptables' lock file goes to its /run.
    const kubeProxy = startChild(
      'kube-proxy',
      'nsenter',
      inNamespace(options.kubeProxy, [`--config=${join(dir, 'kube-proxy.yaml')}`, '--v=1']),
      dir,
    );
    started.kubeProxy = kubeProxy;
    await waitReady(kubeProxy, () => healthy(proxyHealthz), timeoutMs);
    const core = plane.kubeConfig().makeApiClient(CoreV1Api);
    await waitFor(async () => {
      try {
        return nodeReady(await core.readNode({ name }));
      } catch {
        return false;
      }
    }, timeoutMs);

    return {
      name,
      dir,
      runtime,
      loadImage: (archive) => loadImageArchive(runtime, archive),
      async tagImage(source, target) {
        await ctr(runtime, ['images', 'tag', '--force', source, target]);
      },
      async containerCgroupFile(containerID, file) {
        const id = containerID.replace(/^[a-z]+:\/\//, '');
        const hierarchy = join('/sys/fs/cgroup', file.split('.')[0] ?? '', cgroupRoot);
        const folder = await findFolder(hierarchy, id);
        if (folder === undefined) throw new Error(`no cgroup of container ${id} in ${hierarchy}`);
        return (await readFile(join(folder, file), 'utf8')).trim();
      },
      async containerLogs(namespaceName, pod, container) {
        const podsDir = join(dir, 'pod-logs');
        const prefix = `${namespaceName}_${pod}_`;
        const podDirs = (await readdir(podsDir)).filter((d) => d.startsWith(prefix));
        const runs: string[][] = [];
        for (const podDir of podDirs) {
          const containerDir = join(podsDir, podDir, container);
          const files = await readdir(containerDir).catch(() => []);
          const ordered = files
            .filter((f) => /^\d+\.log$/.test(f))
            .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
          for (const file of ordered) {
            runs.push(logMessages(await readFile(join(containerDir, file), 'utf8')));
          }
        }
        return runs;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The folder named `name` below `root`, depth first. */
async function findFolder(root: string, name: string): Promise<string | undefined> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const path = join(root, entry.name);
    if (entry.name === name) return path;
    const found = await findFolder(path, name);
    if (found !== undefined) return found;
  }
  return undefined;
}
