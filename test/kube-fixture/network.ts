/**
 * A cluster's own network namespace, made with `unshare --net` (never `ip netns add`, which leaves
 * a mount on the host): the control plane, the node and its pods run in it, with addresses that
 * exist nowhere else. The host's namespace gets nothing: no interface, route, firewall rule or
 * sysctl. Two ways cross the boundary, both through 127.0.0.1 on the host:
 *
 * - in: `forward(port)` makes 127.0.0.1:PORT on the host lead to 127.0.0.1:PORT in the namespace
 *   (the API server, health ports), so a kubeconfig naming https://127.0.0.1:PORT works on both
 *   sides;
 * - out: the API server calls webhooks given by URL (`https://127.0.0.1:PORT`, a `sidecarset serve`
 *   started on the host) through an HTTP CONNECT proxy on a unix socket, its egress selector's
 *   `controlplane` route; the proxy dials 127.0.0.1 on the host and nothing else. Webhooks behind
 *   a Service go straight to their pods.
 *
 * How the namespace is laid out: network-namespace.ts.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

/** What the parent and network-namespace.ts tell each other. */
export type NetworkMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'forward'; readonly port: number }
  | { readonly type: 'forwarding'; readonly port: number };

/** The node's address, on the bridge its pods are attached to. */
export const NODE_IP = '10.244.0.1';
export const POD_CIDR = '10.244.0.0/24';
/** The Services' range: `kubernetes` is 10.0.0.1. */
export const SERVICE_CIDR = '10.0.0.0/24';

export interface ClusterNetwork {
  /** A process in the namespace: `nsenter -t PID -n` enters it. */
  readonly pid: number;
  /** The egress selector configuration file the API server takes. */
  readonly egressConfig: string;
  /** `binary args` run in the namespace, as a command and arguments to spawn. */
  inside(binary: string, args: readonly string[]): [string, string[]];
  /** Makes 127.0.0.1:port on the host lead to 127.0.0.1:port in the namespace. */
  forward(port: number): Promise<void>;
  stop(): Promise<void>;
}

const NAMESPACE_MAIN = new URL('./network-namespace.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');

function nextMessage(child: ChildProcess, wanted: (m: NetworkMessage) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: NetworkMessage): void => {
      if (!wanted(m)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve();
    };
    const onExit = (code: number | null): void => {
      reject(new Error(`the network namespace's process exited (${String(code)})`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** The HTTP CONNECT proxy of the API server's egress to the host: to 127.0.0.1 only. */
function egressProxy(socketPath: string): Promise<HttpServer> {
  const proxy = createHttpServer((_req, res) => {
    res.writeHead(405).end();
  });
  proxy.on('connect', (req, client) => {
    const m = /^(127\.0\.0\.1|localhost):(\d+)$/.exec(req.url ?? '');
    if (m === null) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(Number(m[2]), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.on('error', () => upstream.destroy());
  });
  return new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(socketPath, () => {
      resolve(proxy);
    });
  });
}

function egressConfiguration(socketPath: string): string {
  return `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
  # Webhooks given by URL: on the host's 127.0.0.1, through network.ts's proxy.
  - name: controlplane
    connection:
      proxyProtocol: HTTPConnect
      transport:
        uds:
          udsName: ${socketPath}
  # Webhooks behind Services, the kubelets: in the namespace.
  - name: cluster
    connection:
      proxyProtocol: Direct
  - name: etcd
    connection:
      proxyProtocol: Direct
`;
}

/** Starts the namespace; `dir` holds the proxy's socket and the egress configuration. */
export async function startClusterNetwork(
  dir: string,
  writeFile: (path: string, text: string) => Promise<void>,
): Promise<ClusterNetwork> {
  // It dies with this process (the parent-death signal), and the namespace with it.
  const [command, args] = [
    'setpriv',
    [
      '--pdeathsig',
      'SIGKILL',
      '--',
      'unshare',
      '--net',
      '--',
      process.execPath,
      '--import',
      TSX,
      NAMESPACE_MAIN,
      `${NODE_IP}/24`,
      SERVICE_CIDR,
    ],
  ] as const;
  const log = openSync(join(dir, 'network.log'), 'a');
  // The IPC channel's descriptor goes down setpriv, unshare and node (NODE_CHANNEL_FD).
  const child = spawn(command, args, { stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  await nextMessage(child, (m) => m.type === 'ready');
  const pid = child.pid;
  if (pid === undefined) throw new Error('the network namespace has no process');
  const socketPath = join(dir, 'egress.sock');
  const proxy = await egressProxy(socketPath);
  const egressConfig = join(dir, 'egress-selector.yaml');
  await writeFile(egressConfig, egressConfiguration(socketPath));
  return {
    pid,
    egressConfig,
    inside: (binary, argv) => ['nsenter', ['-t', String(pid), '-n', '--', binary, ...argv]],
    async forward(port) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      const forwarding = nextMessage(child, (m) => m.type === 'forwarding' && m.port === port);
      child.send({ type: 'forward', port } satisfies NetworkMessage, server);
      await forwarding;
      // The namespace's process accepts on its copy of the socket; ours is not needed.
      server.close();
    },
    async stop() {
      proxy.close();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
