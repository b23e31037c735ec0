/** The pods of OpenKruise's pod webhook tests (pkg/webhook/pod/mutating/sidecarset_test.go). */
import type { Pod } from '../../src/core/api/k8s-types.js';
import { makePod } from './factories.js';

/** pod1: label app=suxing-test, init-0, and nginx with env hello1/hello2 and two mounts. */
export const openKruisePod1 = (): Pod =>
  makePod({
    name: 'test-pod',
    labels: { app: 'suxing-test' },
    initContainers: [{ name: 'init-0', image: 'busybox:1.0.0' }],
    containers: [
      {
        name: 'nginx',
        image: 'nginx:1.15.1',
        env: [
          { name: 'hello1', value: 'world1' },
          { name: 'hello2', value: 'world2' },
        ],
        volumeMounts: [
          { name: 'volume-a', mountPath: '/a/b' },
          { name: 'volume-b', mountPath: '/e/f' },
        ],
      },
    ],
    spec: { volumes: [{ name: 'volume-a' }, { name: 'volume-b' }] },
  });
