import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SidecarSetError } from '../../../src/core/errors.js';
import { SIDECAR_CONTAINER } from '../../../src/core/encoding/go-container-fields.js';
import type { GoType } from '../../../src/core/encoding/go-json.js';
import {
  encodeGo,
  goBool,
  goInt32,
  goInt64,
  goIntOrString,
  goMap,
  goPtr,
  goQuantity,
  goSlice,
  goString,
  goStruct,
} from '../../../src/core/encoding/go-json.js';
import { sidecarSetHashInput } from '../../../src/core/api/hash.js';

// Outputs of Go's json.Marshal on the SidecarContainer types decoded from the input (struct
// definitions taken mechanically from k8s.io/api v0.32.10 and kruise HEAD, real Quantity code).
const GO_VERIFIED: [string, Record<string, unknown>, string][] = [
  [
    'empty container',
    { containers: [{}] },
    '{"containers":[{"name":"","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  ['nil containers', {}, '{"containers":null}'],
  ['empty containers list', { containers: [] }, '{"containers":[]}'],
  [
    'unknown fields are dropped',
    { containers: [{ name: 'a', bogus: 1, resources: { extra: true } }] },
    '{"containers":[{"name":"a","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'null scalars read as zero',
    { containers: [{ name: null, image: null, stdin: null, ports: [{ containerPort: null }] }] },
    '{"containers":[{"name":"","ports":[{"containerPort":0}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'grpc service without omitempty',
    { containers: [{ name: 'a', livenessProbe: { grpc: { port: 9000 } } }] },
    '{"containers":[{"name":"a","resources":{},"livenessProbe":{"grpc":{"port":9000,"service":null}},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'probe handler inlined, in order',
    {
      containers: [
        {
          name: 'a',
          readinessProbe: {
            periodSeconds: 5,
            tcpSocket: { port: 'http' },
            exec: { command: ['true'] },
            httpGet: { port: 8080, path: '/h', httpHeaders: [{ name: 'X', value: '' }] },
          },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{},"readinessProbe":{"exec":{"command":["true"]},"httpGet":{"path":"/h","port":8080,"httpHeaders":[{"name":"X","value":""}]},"tcpSocket":{"port":"http"},"periodSeconds":5},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'resourceFieldRef divisor always written',
    {
      containers: [
        {
          name: 'a',
          env: [
            { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
            {
              name: 'MEM',
              valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } },
            },
          ],
        },
      ],
    },
    '{"containers":[{"name":"a","env":[{"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"0"}}},{"name":"MEM","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1Mi"}}}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'envFrom with embedded LocalObjectReference',
    {
      containers: [
        {
          name: 'a',
          envFrom: [
            { configMapRef: { name: 'cm' } },
            { prefix: 'P_', secretRef: { name: 's', optional: false } },
          ],
        },
      ],
    },
    '{"containers":[{"name":"a","envFrom":[{"configMapRef":{"name":"cm"}},{"prefix":"P_","secretRef":{"name":"s","optional":false}}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'resources map keys sorted, quantities canonical',
    {
      containers: [
        {
          name: 'a',
          resources: {
            requests: { memory: '1024Mi', cpu: '1000m', 'example.com/gpu': 1 },
            limits: { cpu: 0.5 },
            claims: [{ name: 'gpu' }],
          },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{"limits":{"cpu":"500m"},"requests":{"cpu":"1","example.com/gpu":"1","memory":"1Gi"},"claims":[{"name":"gpu"}]},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'pointer to empty string and false are kept',
    {
      containers: [
        {
          name: 'a',
          restartPolicy: '',
          securityContext: { privileged: false, runAsUser: 0, capabilities: {} },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{},"restartPolicy":"","securityContext":{"capabilities":{},"privileged":false,"runAsUser":0},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'empty slices omitted, non-omitempty fields zero',
    {
      containers: [
        {
          name: 'a',
          command: [],
          args: [],
          ports: [{}],
          volumeMounts: [{ name: 'v' }],
          volumeDevices: [{}],
        },
      ],
    },
    '{"containers":[{"name":"a","ports":[{"containerPort":0}],"resources":{},"volumeMounts":[{"name":"v","mountPath":""}],"volumeDevices":[{"name":"","devicePath":""}],"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'lifecycle with sleep',
    {
      containers: [
        {
          name: 'a',
          lifecycle: { preStop: { sleep: { seconds: 5 } }, postStart: { httpGet: { port: 80 } } },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{},"lifecycle":{"postStart":{"httpGet":{"port":80}},"preStop":{"sleep":{"seconds":5}}},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'kruise fields',
    {
      containers: [
        {
          name: 'a',
          podInjectPolicy: 'AfterAppContainer',
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
          shareVolumePolicy: { type: 'enabled' },
          shareVolumeDevicePolicy: {},
          transferEnv: [
            {
              sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['c']" } },
              envNames: ['A', 'B'],
            },
          ],
          resourcesPolicy: {
            targetContainersMode: 'sum',
            resourcesExpr: { limits: { cpu: 'cpu*50%' } },
          },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{},"podInjectPolicy":"AfterAppContainer","upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:1"},"shareVolumePolicy":{"type":"enabled"},"shareVolumeDevicePolicy":{},"transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"fieldPath":"metadata.labels[\'c\']"}},"envNames":["A","B"]}],"resourcesPolicy":{"targetContainersMode":"sum","resourcesExpr":{"limits":{"cpu":"cpu*50%"}}}}]}',
  ],
  [
    'strings escaped as Go does',
    {
      containers: [
        { name: 'a<b>&c', args: ['  ', 'tab\tquote"back\\slash', '\u0000\u001f', 'é😀'] },
      ],
    },
    '{"containers":[{"name":"a\\u003cb\\u003e\\u0026c","args":["\\u2028\\u2029","tab\\tquote\\"back\\\\slash","\\u0000\\u001f","é😀"],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'securityContext nested types',
    {
      containers: [
        {
          name: 'a',
          securityContext: {
            seLinuxOptions: { level: 's0' },
            windowsOptions: { hostProcess: true },
            seccompProfile: { type: 'RuntimeDefault' },
            appArmorProfile: { type: 'Localhost', localhostProfile: 'p' },
            procMount: 'Default',
            runAsGroup: 1,
            runAsNonRoot: true,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
          },
        },
      ],
    },
    '{"containers":[{"name":"a","resources":{},"securityContext":{"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]},"seLinuxOptions":{"level":"s0"},"windowsOptions":{"hostProcess":true},"runAsGroup":1,"runAsNonRoot":true,"readOnlyRootFilesystem":true,"allowPrivilegeEscalation":false,"procMount":"Default","seccompProfile":{"type":"RuntimeDefault"},"appArmorProfile":{"type":"Localhost","localhostProfile":"p"}},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'init containers included when one is a native sidecar',
    {
      containers: [{ name: 'a' }],
      initContainers: [{ name: 'i1' }, { name: 'i2', restartPolicy: 'Always' }],
    },
    '{"containers":[{"name":"a","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],"initContainers":[{"name":"i1","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}},{"name":"i2","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
  [
    'init containers excluded otherwise',
    { containers: [{ name: 'a' }], initContainers: [{ name: 'i1', restartPolicy: 'OnFailure' }] },
    '{"containers":[{"name":"a","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
  ],
];

describe('encodeGo: SidecarContainer, verified against Go', () => {
  for (const [name, spec, expected] of GO_VERIFIED) {
    it(name, () => {
      assert.equal(sidecarSetHashInput(spec), expected);
    });
  }
});

const INNER = goStruct('Inner', [
  ['a,omitempty', goString],
  ['b', goInt32],
]);

const ALL: GoType = goStruct('All', [
  ['s', goString],
  ['so,omitempty', goString],
  ['b', goBool],
  ['bo,omitempty', goBool],
  ['i', goInt32],
  ['io,omitempty', goInt32],
  ['l', goInt64],
  ['p', goPtr(goString)],
  ['po,omitempty', goPtr(goString)],
  ['sl', goSlice(goString)],
  ['slo,omitempty', goSlice(goString)],
  ['m', goMap(goString)],
  ['mo,omitempty', goMap(goString)],
  ['st', INNER],
  ['sto,omitempty', INNER],
  ['q,omitempty', goQuantity],
  ['ios,omitempty', goIntOrString],
  [',inline', goStruct('Embedded', [['e,omitempty', goString]])],
]);

describe('encodeGo: zero values and omitempty', () => {
  it('writes zero values for fields without omitempty and keeps non-pointer structs', () => {
    assert.equal(
      encodeGo({}, ALL),
      '{"s":"","b":false,"i":0,"l":0,"p":null,"sl":null,"m":null,"st":{"b":0},"sto":{"b":0},"q":"0","ios":0}',
    );
  });

  it('omits empty values under omitempty, keeps non-empty ones', () => {
    const value = {
      so: 'x',
      bo: true,
      io: -1,
      po: '',
      slo: ['a'],
      mo: { k: 'v' },
      sl: [],
      m: {},
      e: 'embedded',
      q: '1000m',
      ios: '50%',
    };
    assert.equal(
      encodeGo(value, ALL),
      '{"s":"","so":"x","b":false,"bo":true,"i":0,"io":-1,"l":0,"p":null,"po":"","sl":[],"slo":["a"],"m":{},"mo":{"k":"v"},"st":{"b":0},"sto":{"b":0},"q":"1","ios":"50%","e":"embedded"}',
    );
  });

  it('omits empty slices and maps under omitempty and reads null as nil', () => {
    const out = encodeGo({ slo: [], mo: {}, po: null, so: null, p: null }, ALL);
    assert.ok(!out.includes('"slo"') && !out.includes('"mo"') && !out.includes('"po"'));
    assert.ok(out.includes('"p":null'));
  });

  it('drops unknown fields and reads null structs as zero structs', () => {
    assert.equal(encodeGo({ zzz: 1, st: null }, INNER), '{"b":0}');
    assert.equal(encodeGo(null, INNER), '{"b":0}');
  });
});

describe('encodeGo: maps and strings', () => {
  it('sorts map keys by UTF-8 bytes like Go', () => {
    const value = {
      '\u00e9': '1',
      z: '2',
      Z: '3',
      '\ud83d\ude00': '4',
      '\uffff': '5',
      a: undefined,
    };
    assert.equal(
      encodeGo(value, goMap(goString)),
      '{"Z":"3","z":"2","é":"1","\uffff":"5","😀":"4"}',
    );
  });

  it('escapes <, >, &, U+2028 and U+2029 and replaces lone surrogates', () => {
    assert.equal(
      encodeGo('<a&b>\u2028\u2029', goString),
      '"\\u003ca\\u0026b\\u003e\\u2028\\u2029"',
    );
    assert.equal(encodeGo('x\ud800y', goString), '"x\ufffdy"');
    assert.equal(encodeGo('\b\f\n\r\t\u0001', goString), '"\\b\\f\\n\\r\\t\\u0001"');
  });

  it('IntOrString: number or string', () => {
    assert.equal(encodeGo(8080, goIntOrString), '8080');
    assert.equal(encodeGo('http', goIntOrString), '"http"');
    assert.equal(encodeGo(null, goIntOrString), '0');
  });

  it('quantities: null is zero, numbers are parsed', () => {
    assert.equal(encodeGo(null, goQuantity), '"0"');
    assert.equal(encodeGo(0.25, goQuantity), '"250m"');
  });
});

describe('encodeGo: values Go cannot decode are SI_ERR_BAD_INPUT', () => {
  const cases: [string, unknown, GoType][] = [
    ['number for string', 5, goString],
    ['string for bool', 'true', goBool],
    ['fraction for int32', 1.5, goInt32],
    ['int32 overflow', 2 ** 31, goInt32],
    ['string for int64', '1', goInt64],
    ['boolean for quantity', true, goQuantity],
    ['bad quantity', '1x', goQuantity],
    ['fraction for IntOrString', 1.5, goIntOrString],
    ['object for slice', {}, goSlice(goString)],
    ['array for map', [], goMap(goString)],
    ['string for struct', 'x', INNER],
    [
      'nested path',
      { containers: [{ ports: [{ containerPort: 'x' }] }] },
      goMap(goSlice(SIDECAR_CONTAINER)),
    ],
  ];
  for (const [name, value, type] of cases) {
    it(name, () => {
      assert.throws(
        () => encodeGo(value, type),
        (err: unknown) => err instanceof SidecarSetError && err.code === 'SI_ERR_BAD_INPUT',
      );
    });
  }

  it('names the path of the bad value', () => {
    assert.throws(
      () =>
        sidecarSetHashInput({
          containers: [{ name: 'a', ports: [{ containerPort: 'x' }] }],
        } as never),
      /spec\.containers\[0\]\.ports\[0\]\.containerPort/,
    );
  });
});
