/**
 * The shape of an apps.kruise.io/v1alpha1 SidecarSet document as JSON Schema (draft-07 subset
 * that a CRD's openAPIV3Schema accepts). Unknown fields are rejected on spec and on the
 * SidecarSet-specific sub-objects; container objects accept any core/v1 field.
 */
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const strArray = { type: 'array', items: str } as const;
const intOrString = {
  'x-kubernetes-int-or-string': true,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
} as const;
const object = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as const;

const labelSelector = {
  type: 'object',
  additionalProperties: false,
  properties: {
    matchLabels: { type: 'object', additionalProperties: str },
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'operator'],
        properties: { key: str, operator: str, values: strArray },
      },
    },
  },
} as const;

const sharePolicy = {
  type: 'object',
  additionalProperties: false,
  properties: { type: { type: 'string', enum: ['enabled', 'disabled'] } },
} as const;

const resourceExpr = {
  type: 'object',
  additionalProperties: false,
  properties: { cpu: str, memory: str },
} as const;

const sidecarContainer = {
  type: 'object',
  required: ['name'],
  additionalProperties: true,
  properties: {
    name: str,
    image: str,
    command: strArray,
    args: strArray,
    workingDir: str,
    ports: { type: 'array', items: object },
    env: { type: 'array', items: object },
    envFrom: { type: 'array', items: object },
    resources: object,
    restartPolicy: str,
    volumeMounts: { type: 'array', items: object },
    volumeDevices: { type: 'array', items: object },
    livenessProbe: object,
    readinessProbe: object,
    startupProbe: object,
    lifecycle: object,
    imagePullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
    terminationMessagePath: str,
    terminationMessagePolicy: { type: 'string', enum: ['File', 'FallbackToLogsOnError'] },
    securityContext: object,
    stdin: bool,
    stdinOnce: bool,
    tty: bool,
    podInjectPolicy: { type: 'string', enum: ['BeforeAppContainer', 'AfterAppContainer'] },
    upgradeStrategy: {
      type: 'object',
      additionalProperties: false,
      properties: {
        upgradeType: { type: 'string', enum: ['ColdUpgrade', 'HotUpgrade'] },
        hotUpgradeEmptyImage: str,
      },
    },
    shareVolumePolicy: sharePolicy,
    shareVolumeDevicePolicy: sharePolicy,
    transferEnv: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          sourceContainerName: str,
          sourceContainerNameFrom: {
            type: 'object',
            additionalProperties: false,
            properties: {
              fieldRef: {
                type: 'object',
                additionalProperties: false,
                required: ['fieldPath'],
                properties: { apiVersion: str, fieldPath: str },
              },
            },
          },
          envName: str,
          envNames: strArray,
        },
      },
    },
    resourcesPolicy: {
      type: 'object',
      additionalProperties: false,
      required: ['targetContainersMode'],
      properties: {
        targetContainersMode: { type: 'string', enum: ['sum', 'max'] },
        targetContainersNameRegex: str,
        resourcesExpr: {
          type: 'object',
          additionalProperties: false,
          properties: { limits: resourceExpr, requests: resourceExpr },
        },
      },
    },
  },
} as const;

export const SIDECARSET_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    apiVersion: { type: 'string', const: 'apps.kruise.io/v1alpha1' },
    kind: { type: 'string', const: 'SidecarSet' },
    metadata: {
      type: 'object',
      required: ['name'],
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        name: { type: 'string', minLength: 1 },
        namespace: str,
        labels: { type: 'object', additionalProperties: str },
        annotations: { type: 'object', additionalProperties: str },
      },
    },
    spec: {
      type: 'object',
      additionalProperties: false,
      properties: {
        selector: labelSelector,
        namespace: str,
        namespaceSelector: labelSelector,
        initContainers: { type: 'array', items: sidecarContainer },
        containers: { type: 'array', items: sidecarContainer },
        volumes: {
          type: 'array',
          items: { type: 'object', required: ['name'], properties: { name: str } },
        },
        updateStrategy: {
          type: 'object',
          additionalProperties: false,
          properties: {
            type: { type: 'string', enum: ['RollingUpdate', 'NotUpdate'] },
            paused: bool,
            selector: labelSelector,
            partition: intOrString,
            maxUnavailable: intOrString,
            priorityStrategy: {
              type: 'object',
              additionalProperties: false,
              properties: {
                orderPriority: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['orderedKey'],
                    properties: { orderedKey: str },
                  },
                },
                weightPriority: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['weight', 'matchSelector'],
                    properties: { weight: int, matchSelector: labelSelector },
                  },
                },
              },
            },
            scatterStrategy: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['key'],
                properties: { key: str, value: str },
              },
            },
          },
        },
        injectionStrategy: {
          type: 'object',
          additionalProperties: false,
          properties: {
            paused: bool,
            revision: {
              type: 'object',
              additionalProperties: false,
              properties: {
                customVersion: str,
                revisionName: str,
                policy: { type: 'string', enum: ['Always', 'Partial'] },
              },
            },
          },
        },
        imagePullSecrets: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, properties: { name: str } },
        },
        revisionHistoryLimit: int,
        patchPodMetadata: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            properties: {
              annotations: { type: 'object', additionalProperties: str },
              patchPolicy: { type: 'string', enum: ['Retain', 'Overwrite', 'MergePatchJson'] },
            },
          },
        },
      },
    },
    status: object,
  },
} as const;
