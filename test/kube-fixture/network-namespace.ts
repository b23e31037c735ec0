/**
 * The first process of a cluster's network namespace (network.ts starts it with `unshare --net`,
 * an IPC channel to its parent): it gives the namespace its links, then holds the namespace open
 * and forwards connections until its parent goes.
 *
 * - `lo`, and the bridge `cni0` carrying the node's address: the CNI bridge plugin attaches pods to
 *   it, and the route of the Services' range through it lets processes of the node dial a
 *   ClusterIP, which kube-proxy's rules then translate.
 * - Forwards: the parent sends a listening socket it made in the host's namespace on 127.0.0.1;
 *   each connection accepted on it is joined to the same port on 127.0.0.1 here. A socket keeps
 *   the namespace it was made in, and the IPC channel is a unix socket, which crosses namespaces.
 */
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import type { Server, Socket } from 'node:net';

import type { NetworkMessage } from './network.js';

const [nodeCidr = '', serviceCidr = ''] = process.argv.slice(2);

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

ip('link', 'set', 'lo', 'up');
ip('link', 'add', 'cni0', 'type', 'bridge');
ip('address', 'add', nodeCidr, 'dev', 'cni0');
ip('link', 'set', 'cni0', 'up');
ip('route', 'add', serviceCidr, 'dev', 'cni0');

function join(accepted: Socket, port: number): void {
  const upstream = connect(port, '127.0.0.1');
  accepted.pipe(upstream).pipe(accepted);
  accepted.on('error', () => upstream.destroy());
  upstream.on('error', () => accepted.destroy());
}

process.on('message', (message: NetworkMessage, handle: unknown) => {
  if (message.type !== 'forward') return;
  const server = handle as Server;
  server.on('connection', (socket) => {
    join(socket, message.port);
  });
  process.send?.({ type: 'forwarding', port: message.port } satisfies NetworkMessage);
});
// The parent went (stopped or died): the namespace goes with this process.
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' } satisfies NetworkMessage);
