import type { SidecarSetApiVersion } from '../api/sidecarset-types.js';
import { V1ALPHA1, V1BETA1 } from '../api/sidecarset-types.js';
import { DEFAULT_TARGET_CONTAINERS_NAME_REGEX } from '../api/defaults.js';

/**
 * The shape of a SidecarSet document, apps.kruise.io/v1alpha1 and v1beta1, as JSON Schema (draft-07 subset
 * that a CRD's openAPIV3Schema accepts). Unknown fields are rejected on spec and on the
 * SidecarSet-specific sub-objects; container objects accept any core/v1 field.
 *
 * The descriptions are what `kubectl explain sidecarset` and docs/api-reference.md print
 * (scripts/gen-crd.ts, scripts/gen-api-reference.ts). They follow OpenKruise's field comments
 * (apis/apps/v1alpha1/sidecarset_types.go, apis/apps/pub/update_priority.go) and say where this
 * project behaves differently.
 */
const str = (description: string) => ({ type: 'string', description }) as const;
const bool = (description: string) => ({ type: 'boolean', description }) as const;
const int = (description: string) => ({ type: 'integer', description }) as const;
const strArray = (description: string, item: string) =>
  ({ type: 'array', description, items: str(item) }) as const;
const stringMap = (description: string) =>
  ({ type: 'object', description, additionalProperties: str('The value.') }) as const;
const intOrString = (description: string) =>
  ({
    description,
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  }) as const;
/** A core/v1 object taken as it is (not checked here; the API server checks it in the pod). */
const object = (description: string) =>
  ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true }) as const;
const objectArray = (description: string, item: string) =>
  ({ type: 'array', description, items: object(item) }) as const;
/** A field of core/v1 Container, which a sidecar container takes as it is. */
const containerField = (what: string) =>
  `${what} As in a pod's container (kubectl explain pod.spec.containers).`;

const labelSelector = (description: string) =>
  ({
    type: 'object',
    description,
    additionalProperties: false,
    properties: {
      matchLabels: stringMap(
        'Labels that must all be present with these values. Each entry is the same as a ' +
          'matchExpressions term with operator In and a single value.',
      ),
      matchExpressions: {
        type: 'array',
        description: 'Label requirements that must all hold.',
        items: {
          type: 'object',
          description: 'One label requirement: a key, an operator and values.',
          additionalProperties: false,
          required: ['key', 'operator'],
          properties: {
            key: str('The label key the requirement applies to.'),
            // In the CRD too, so that the API server refuses what the validating webhook does
            // even while the webhook is not called: an unknown operator stored in a SidecarSet
            // would make every pod's admission fail (SI_ERR_INVALID_SELECTOR, docs/errors.md).
            operator: {
              ...str('In, NotIn, Exists or DoesNotExist.'),
              enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
            },
            values: strArray(
              'The values for In and NotIn (at least one); empty for Exists and DoesNotExist.',
              'A label value.',
            ),
          },
        },
      },
    },
  }) as const;

const sharePolicy = (description: string) =>
  ({
    type: 'object',
    description,
    additionalProperties: false,
    properties: {
      type: {
        type: 'string',
        description: 'enabled or disabled (the default).',
        enum: ['enabled', 'disabled'],
      },
    },
  }) as const;

const resourceExpr = (kind: 'limits' | 'requests') =>
  ({
    type: 'object',
    description:
      kind === 'limits'
        ? "Expressions for the sidecar's resources.limits."
        : "Expressions for the sidecar's resources.requests.",
    additionalProperties: false,
    properties: {
      cpu: str(
        `The sidecar's CPU ${kind}: an expression of +, -, *, /, percentages, quantities, ` +
          "max() and min() over the variable cpu, the target containers' CPU " +
          `${kind} summed or maximised (targetContainersMode). ` +
          (kind === 'limits'
            ? 'A target container without a CPU limit makes cpu unlimited, and an unlimited ' +
              'result sets no limit.'
            : 'A target container without a CPU request counts as 0.') +
          ' Empty: not set.',
      ),
      memory: str(
        `The sidecar's memory ${kind}: an expression like cpu's, over the variable memory. ` +
          (kind === 'limits'
            ? 'A target container without a memory limit makes memory unlimited, and an ' +
              'unlimited result sets no limit.'
            : 'A target container without a memory request counts as 0.') +
          ' Empty: not set.',
      ),
    },
  }) as const;

const sidecarContainer = (description: string) =>
  ({
    type: 'object',
    description,
    required: ['name'],
    additionalProperties: true,
    properties: {
      name: str(
        'The container name. A pod container of the same name is replaced by the sidecar. ' +
          'Two SidecarSets that can select the same pods may not both have a container of this ' +
          'name, and an update of a SidecarSet may not add or rename containers.',
      ),
      image: str(
        containerField('The container image.') +
          ' For a running pod, the image is the only change the controller applies in place.',
      ),
      command: strArray(containerField('The entrypoint.'), 'One word of the command.'),
      args: strArray(containerField('Arguments to the entrypoint.'), 'One argument.'),
      workingDir: str(containerField('The working directory.')),
      ports: objectArray(containerField('Ports to expose.'), 'A core/v1 ContainerPort.'),
      env: objectArray(
        containerField('Environment variables.') +
          ' Variables taken from app containers (transferEnv) are added after these.',
        'A core/v1 EnvVar.',
      ),
      envFrom: objectArray(
        containerField('Sources of environment variables.'),
        'A core/v1 EnvFromSource.',
      ),
      resources: object(
        containerField('Compute resources.') +
          ' Not allowed together with requests or limits computed by resourcesPolicy.',
      ),
      restartPolicy: str(
        'Always on an init container makes it a native sidecar (Kubernetes 1.29 and later): ' +
          'it keeps running beside the app containers and can be upgraded in place like a ' +
          'container. Otherwise as in a pod.',
      ),
      volumeMounts: objectArray(
        containerField('Volume mounts.') +
          ' The volumes come from the pod or from spec.volumes; with shareVolumePolicy ' +
          "enabled, the app containers' mounts are added.",
        'A core/v1 VolumeMount.',
      ),
      volumeDevices: objectArray(
        containerField('Block devices to use.'),
        'A core/v1 VolumeDevice.',
      ),
      livenessProbe: object(containerField('The liveness probe.')),
      readinessProbe: object(containerField('The readiness probe.')),
      startupProbe: object(containerField('The startup probe.')),
      lifecycle: object(containerField('postStart and preStop hooks.')),
      imagePullPolicy: {
        type: 'string',
        description: containerField(
          'Always, IfNotPresent or Never; the default depends on the image tag (Always for ' +
            ':latest or no tag).',
        ),
        enum: ['Always', 'IfNotPresent', 'Never'],
      },
      terminationMessagePath: str(
        containerField('Where the termination message is read, default /dev/termination-log.'),
      ),
      terminationMessagePolicy: {
        type: 'string',
        description: containerField('File (the default) or FallbackToLogsOnError.'),
        enum: ['File', 'FallbackToLogsOnError'],
      },
      securityContext: object(containerField('The security context.')),
      stdin: bool(containerField('Whether the container has a stdin.')),
      stdinOnce: bool(containerField('Whether stdin closes after the first attach.')),
      tty: bool(containerField('Whether the container gets a TTY.')),
      podInjectPolicy: {
        type: 'string',
        description:
          "Where the sidecar goes in the pod's list: BeforeAppContainer in front of the pod's " +
          'own containers, AfterAppContainer behind them; the default is BeforeAppContainer for ' +
          'containers and AfterAppContainer for init containers. Containers of one SidecarSet ' +
          'keep their order and SidecarSets are applied in name order (OpenKruise leaves that ' +
          'order undefined; docs/adr/0001); injected init containers are ordered by name.',
        enum: ['BeforeAppContainer', 'AfterAppContainer'],
      },
      upgradeStrategy: {
        type: 'object',
        description: 'How running pods get a new version of this sidecar.',
        additionalProperties: false,
        properties: {
          upgradeType: {
            type: 'string',
            description:
              'Fixed once set. ColdUpgrade (the default): the container is restarted with the new image. ' +
              'HotUpgrade: the sidecar runs in two containers, <name>-1 and <name>-2, and the ' +
              'new version starts in the idle one before the old one goes idle, so the pod ' +
              'stays ready (for proxies such as Envoy that hand over their work).',
            enum: ['ColdUpgrade', 'HotUpgrade'],
          },
          hotUpgradeEmptyImage: str(
            'For HotUpgrade: the image the idle container runs. It must accept the ' +
              "sidecar's command, args and probes and do no work.",
          ),
        },
      },
      shareVolumePolicy: sharePolicy(
        "enabled: the sidecar also gets the volume mounts of the pod's app containers " +
          '(not those of other sidecars), except at paths it mounts something itself.',
      ),
      shareVolumeDevicePolicy: sharePolicy(
        "enabled: the sidecar also gets the volume devices of the pod's app containers. " +
          'Left out of the hash when unset, so older SidecarSets keep their hash.',
      ),
      transferEnv: {
        type: 'array',
        description:
          'Environment variables copied at injection from a container of the pod into this ' +
          'sidecar.',
        items: {
          type: 'object',
          description:
            'Which container to copy from (sourceContainerName or sourceContainerNameFrom) ' +
            'and which variables (envName or envNames).',
          additionalProperties: false,
          properties: {
            sourceContainerName: str('The name of the container to copy from.'),
            sourceContainerNameFrom: {
              type: 'object',
              description: 'Takes the name of the container to copy from from a field of the pod.',
              additionalProperties: false,
              properties: {
                fieldRef: {
                  type: 'object',
                  description: 'The pod field that holds the container name.',
                  additionalProperties: false,
                  required: ['fieldPath'],
                  properties: {
                    apiVersion: str('The version fieldPath is written in, default v1.'),
                    fieldPath: str(
                      "metadata.name, metadata.labels['<key>'] or " +
                        "metadata.annotations['<key>'].",
                    ),
                  },
                },
              },
            },
            envName: str('One variable to copy.'),
            envNames: strArray('Several variables to copy.', 'A variable name.'),
          },
        },
      },
      resourcesPolicy: {
        type: 'object',
        description:
          "Computes this sidecar's requests and limits when a pod is created, from the " +
          "resources of the pod's containers. Containers only (not init containers), and not " +
          'together with resources.requests or resources.limits. A pod for which the ' +
          'computation fails is rejected (SI_ERR_RESOURCES_POLICY, docs/errors.md). Running ' +
          'pods keep what they got.',
        additionalProperties: false,
        required: ['targetContainersMode'],
        properties: {
          targetContainersMode: {
            type: 'string',
            description:
              "How the target containers' resources are combined: sum adds them, max takes " +
              'the largest.',
            enum: ['sum', 'max'],
          },
          targetContainersNameRegex: {
            type: 'string',
            description:
              "Which of the pod's containers count: those whose names match this regular " +
              "expression (Go's RE2 syntax, anywhere in the name), plain containers and " +
              "native-sidecar init containers, never the SidecarSets' own sidecars. A pod with no " +
              'match is rejected. Unset, it is .*: every container.',
            default: DEFAULT_TARGET_CONTAINERS_NAME_REGEX,
          },
          resourcesExpr: {
            type: 'object',
            description: 'The expressions; at least one of limits and requests.',
            additionalProperties: false,
            properties: { limits: resourceExpr('limits'), requests: resourceExpr('requests') },
          },
        },
      },
    },
  }) as const;

const orderPriority = {
  type: 'array',
  description:
    'Order by label value: a pod is ranked by the first of these keys it carries, pods with ' +
    'an earlier key before pods with a later one, and among pods with the same key the larger ' +
    'number at the end of the value first (sts-10 before sts-9). Pods that carry none of the ' +
    'keys come first, as in OpenKruise (pkg/util/updatesort/priority_sort.go). Not together ' +
    'with weightPriority.',
  items: {
    type: 'object',
    description: 'One label key to order by.',
    additionalProperties: false,
    required: ['orderedKey'],
    properties: { orderedKey: str('The label key.') },
  },
} as const;

const weightPriority = {
  type: 'array',
  description:
    'Order by weight: each pod gets the sum of the weights of the terms whose selector matches ' +
    'its labels, and heavier pods come first. Not together with orderPriority.',
  items: {
    type: 'object',
    description: 'A weight for the pods a selector matches.',
    additionalProperties: false,
    required: ['weight', 'matchSelector'],
    properties: {
      weight: int('The weight, 0 to 100.'),
      matchSelector: labelSelector('The pods that get the weight; must not be empty.'),
    },
  },
} as const;

const updateStrategy = {
  type: 'object',
  description:
    'How the controller rolls a new version of the sidecars out to running pods, in place ' +
    '(only image changes can be applied in place; docs/plan.md previews a rollout).',
  additionalProperties: false,
  properties: {
    type: {
      type: 'string',
      description:
        'RollingUpdate (the default) upgrades running pods; NotUpdate leaves them as they are ' +
        'and only new pods get the new version.',
      enum: ['RollingUpdate', 'NotUpdate'],
    },
    paused: bool(
      'true holds the rollout: no running pod is upgraded until it is false again. New pods ' +
        'are still injected.',
    ),
    selector: labelSelector(
      'Upgrade only the matched pods whose labels also match this selector (a canary); not ' +
        'together with partition. With injectionStrategy.revision.policy Partial, new pods ' +
        'that it does not select get the pinned version.',
    ),
    partition: intOrString(
      'How many matched pods stay on their old version: a number, or a percentage of the ' +
        'matched pods (rounded up, but below 100% at least one pod is upgraded). Default 0: all ' +
        'are upgraded. Lower it step by step to continue a rollout. Not together with selector.',
    ),
    maxUnavailable: intOrString(
      'At most this many matched pods may be unavailable (not ready, or being upgraded) while ' +
        'pods are upgraded: a number, or a percentage of the matched pods (rounded up). ' +
        'Default 1; 0 upgrades only pods that are not ready. Pods that are not ready anyway are ' +
        'upgraded first.',
    ),
    minReadySeconds: {
      ...int(
        'Seconds a pod must have been Ready to count as available to maxUnavailable, as a ' +
          "Deployment's minReadySeconds (this project's; OpenKruise has none). Default 0. A pod " +
          'whose sidecar restarted since its upgrade waits at least 10 s, so that a sidecar ' +
          'that keeps crashing does not free the budget between crashes.',
      ),
      minimum: 0,
    },
    priorityStrategy: {
      type: 'object',
      description:
        'Which pods are upgraded first; pods it cannot tell apart keep the default order ' +
        '(not ready before ready, and so on), then namespace and name order (OpenKruise leaves ' +
        'that tie unordered; docs/adr/0003). Only one of orderPriority and weightPriority.',
      additionalProperties: false,
      properties: { orderPriority, weightPriority },
    },
    scatterStrategy: {
      type: 'array',
      description:
        'Spreads pods with the same label value evenly over the upgrade order, so that they ' +
        'are not upgraded in the same batch. Applied after priorityStrategy; use one term, or ' +
        'one of the two strategies, to keep the order easy to follow.',
      items: {
        type: 'object',
        description:
          'A label key and value to scatter. Unlike OpenKruise, the value may be left out: ' +
          'like "*", the term then stands for every value of the key (docs/adr/0003).',
        additionalProperties: false,
        required: ['key'],
        properties: {
          key: str('The label key.'),
          value: str(
            'The label value, or "*" or absent for every value of the key. "" stands for pods ' +
              'without the label.',
          ),
        },
      },
    },
  },
} as const;

const injectionStrategy = {
  type: 'object',
  description: 'How new pods are injected.',
  additionalProperties: false,
  properties: {
    paused: bool(
      'true: new pods are not injected. Pods already injected keep their sidecars and are ' +
        'still upgraded.',
    ),
    revision: {
      type: 'object',
      description:
        'Pins new pods to an earlier version of this SidecarSet, kept as a ControllerRevision, ' +
        'instead of the current spec (for example while a new version is held back with ' +
        'updateStrategy.paused). Set customVersion or revisionName.',
      additionalProperties: false,
      properties: {
        customVersion: str(
          'The version whose SidecarSet carried the label ' +
            'apps.kruise.io/sidecarset-custom-version (v1alpha1) or spec.customVersion ' +
            '(v1beta1) with this value.',
        ),
        revisionName: str('The name of the ControllerRevision to inject.'),
        policy: {
          type: 'string',
          description:
            'Always (the default): every new pod gets the pinned version. Partial: a new pod ' +
            'gets the pinned version while updateStrategy.paused is true or when ' +
            'updateStrategy.selector does not select it; otherwise the latest version with ' +
            'the probability 1 - updateStrategy.partition (a percentage; any other partition ' +
            'counts as 0%).',
          enum: ['Always', 'Partial'],
        },
      },
    },
  },
} as const;

/** apps.kruise.io/v1alpha1. */
export const SIDECARSET_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  description:
    'A SidecarSet injects sidecar containers into the pods it selects when they are created, ' +
    'and upgrades them in place in running pods when it changes.',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    apiVersion: {
      type: 'string',
      description: 'The API version of the object: apps.kruise.io/v1alpha1.',
      const: 'apps.kruise.io/v1alpha1',
    },
    kind: {
      type: 'string',
      description: 'The kind of the object: SidecarSet.',
      const: 'SidecarSet',
    },
    metadata: {
      type: 'object',
      description:
        'Standard object metadata; SidecarSets are cluster-scoped. The webhook writes the ' +
        'annotations kruise.io/sidecarset-hash and kruise.io/sidecarset-hash-without-image.',
      required: ['name'],
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        name: { type: 'string', minLength: 1 },
        namespace: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        annotations: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    spec: {
      type: 'object',
      description: 'Which pods get which sidecars, and how they are injected and upgraded.',
      additionalProperties: false,
      properties: {
        selector: labelSelector(
          'The pods to inject, by label. Without a selector, or with an empty one, the ' +
            'SidecarSet matches no pod.',
        ),
        namespace: str(
          'Only pods in this namespace; empty: every namespace. Not together with ' +
            'namespaceSelector (refused, as OpenKruise v1.8 does; docs/adr/0001). v1beta1 says ' +
            'it as namespaceSelector matchLabels kubernetes.io/metadata.name: <name>.',
        ),
        namespaceSelector: labelSelector(
          'Only pods in namespaces whose labels match; unset: every namespace. Not together ' +
            'with namespace.',
        ),
        containers: {
          type: 'array',
          description:
            'Sidecar containers added to the pod at pod creation and upgraded in place ' +
            'afterwards. Their definition (hashed into kruise.io/sidecarset-hash) is what ' +
            'makes a pod up to date.',
          items: sidecarContainer(
            'A core/v1 container, any of whose fields may be given, plus how to inject and ' +
              'upgrade it.',
          ),
        },
        initContainers: {
          type: 'array',
          description:
            "Init containers added to the pod's init containers at pod creation. Plain init " +
            'containers are never upgraded; those with restartPolicy Always (native sidecars) ' +
            'are upgraded in place like containers.',
          items: sidecarContainer('An init container, with the SidecarSet fields of a sidecar.'),
        },
        volumes: {
          type: 'array',
          description:
            'Volumes the sidecars mount, added to the pod unless it has a volume of that name ' +
            "(the pod's volume wins).",
          items: {
            type: 'object',
            description: 'A core/v1 Volume.',
            required: ['name'],
            properties: { name: str('The volume name.') },
          },
        },
        updateStrategy,
        injectionStrategy,
        imagePullSecrets: {
          type: 'array',
          description:
            "Secrets for pulling the sidecars' images, added to the pod's imagePullSecrets " +
            'when the pod does not list them already.',
          items: {
            type: 'object',
            description: "A reference to a Secret in the pod's namespace.",
            additionalProperties: false,
            properties: { name: str('The Secret name.') },
          },
        },
        revisionHistoryLimit: int(
          'How many ControllerRevisions (earlier versions of this SidecarSet) are kept. ' +
            'Default 10.',
        ),
        patchPodMetadata: {
          type: 'array',
          description:
            'Annotations written into the pods at injection. Keys that hold SidecarSet ' +
            'bookkeeping (kruise.io/sidecarset-*, sidecarset.dev/*, the hot-upgrade ' +
            'version.sidecarset.kruise.io/ and versionalt.sidecarset.kruise.io/ keys) are ' +
            "refused; other keys only where the webhook's allow-list lets the SidecarSet " +
            "write them, as OpenKruise's whitelist does (docs/security.md).",
          items: {
            type: 'object',
            description: 'Annotations and how they meet the values the pod already has.',
            additionalProperties: false,
            properties: {
              annotations: stringMap('The annotations to write.'),
              patchPolicy: {
                type: 'string',
                description:
                  'Retain (the default): a value the pod already has is kept. Overwrite: ' +
                  'the value replaces it. MergePatchJson: the value is a JSON object merged ' +
                  'into the JSON object the pod has (RFC 7386), so several SidecarSets can ' +
                  'write one annotation. Two SidecarSets may not write one key with Retain or ' +
                  'Overwrite.',
                enum: ['Retain', 'Overwrite', 'MergePatchJson'],
              },
            },
          },
        },
      },
    },
    status: object('The observed state, written by the controller.'),
  },
} as const;

type SchemaNode = Readonly<Record<string, unknown>>;

const V1ALPHA1_SPEC = SIDECARSET_SCHEMA.properties.spec;
const V1BETA1_SPEC_FIELDS = Object.fromEntries(
  Object.entries(V1ALPHA1_SPEC.properties).filter(([field]) => field !== 'namespace'),
);

/**
 * apps.kruise.io/v1beta1 (OpenKruise apis/apps/v1beta1/sidecarset_types.go): no spec.namespace
 * (a namespaceSelector on kubernetes.io/metadata.name says it), and the custom version in
 * spec.customVersion instead of a label.
 */
const SIDECARSET_SCHEMA_V1BETA1: SchemaNode = {
  ...SIDECARSET_SCHEMA,
  properties: {
    ...SIDECARSET_SCHEMA.properties,
    apiVersion: {
      type: 'string',
      description: 'The API version of the object: apps.kruise.io/v1beta1.',
      const: 'apps.kruise.io/v1beta1',
    },
    spec: {
      ...V1ALPHA1_SPEC,
      properties: {
        ...V1BETA1_SPEC_FIELDS,
        namespaceSelector: labelSelector(
          'Only pods in namespaces whose labels match; unset: every namespace. One namespace: ' +
            'matchLabels kubernetes.io/metadata.name: <name> (what v1alpha1 spec.namespace ' +
            'becomes).',
        ),
        customVersion: str(
          'A name for this version of the SidecarSet, given to the ControllerRevision that ' +
            'records it, so that injectionStrategy.revision.customVersion can pin new pods to ' +
            'it. A label value. In v1alpha1 it is the label ' +
            'apps.kruise.io/sidecarset-custom-version, which v1beta1 refuses.',
        ),
      },
    },
  },
};

/** The schema of each served version. */
export const SIDECARSET_SCHEMAS: Readonly<Record<SidecarSetApiVersion, SchemaNode>> = {
  [V1BETA1]: SIDECARSET_SCHEMA_V1BETA1,
  [V1ALPHA1]: SIDECARSET_SCHEMA,
};
