/**
 * Go field tables for OpenKruise's SidecarContainer and every core/v1 type nested in it, in
 * declaration order with their json tags. Sources: k8s.io/api v0.32.10 core/v1/types.go (the
 * version OpenKruise HEAD 07169cfac vendors) and apis/apps/v1alpha1/sidecarset_types.go.
 * A field added upstream changes the hash only when set, since every new field is omitempty.
 */
import type { GoStruct } from './go-json.js';
import {
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
} from './go-json.js';

const strings = goSlice(goString);
const optString = goPtr(goString);
const optBool = goPtr(goBool);
const optInt64 = goPtr(goInt64);

export const LOCAL_OBJECT_REFERENCE = goStruct('LocalObjectReference', [
  ['name,omitempty', goString],
]);

const CONTAINER_PORT = goStruct('ContainerPort', [
  ['name,omitempty', goString],
  ['hostPort,omitempty', goInt32],
  ['containerPort', goInt32],
  ['protocol,omitempty', goString],
  ['hostIP,omitempty', goString],
]);

const CONFIG_MAP_ENV_SOURCE = goStruct('ConfigMapEnvSource', [
  [',inline', LOCAL_OBJECT_REFERENCE],
  ['optional,omitempty', optBool],
]);

const SECRET_ENV_SOURCE = goStruct('SecretEnvSource', [
  [',inline', LOCAL_OBJECT_REFERENCE],
  ['optional,omitempty', optBool],
]);

const ENV_FROM_SOURCE = goStruct('EnvFromSource', [
  ['prefix,omitempty', goString],
  ['configMapRef,omitempty', goPtr(CONFIG_MAP_ENV_SOURCE)],
  ['secretRef,omitempty', goPtr(SECRET_ENV_SOURCE)],
]);

const OBJECT_FIELD_SELECTOR = goStruct('ObjectFieldSelector', [
  ['apiVersion,omitempty', goString],
  ['fieldPath', goString],
]);

const RESOURCE_FIELD_SELECTOR = goStruct('ResourceFieldSelector', [
  ['containerName,omitempty', goString],
  ['resource', goString],
  // A Quantity struct: omitempty has no effect, so an unset divisor is written as "0".
  ['divisor,omitempty', goQuantity],
]);

const CONFIG_MAP_KEY_SELECTOR = goStruct('ConfigMapKeySelector', [
  [',inline', LOCAL_OBJECT_REFERENCE],
  ['key', goString],
  ['optional,omitempty', optBool],
]);

const SECRET_KEY_SELECTOR = goStruct('SecretKeySelector', [
  [',inline', LOCAL_OBJECT_REFERENCE],
  ['key', goString],
  ['optional,omitempty', optBool],
]);

const ENV_VAR_SOURCE = goStruct('EnvVarSource', [
  ['fieldRef,omitempty', goPtr(OBJECT_FIELD_SELECTOR)],
  ['resourceFieldRef,omitempty', goPtr(RESOURCE_FIELD_SELECTOR)],
  ['configMapKeyRef,omitempty', goPtr(CONFIG_MAP_KEY_SELECTOR)],
  ['secretKeyRef,omitempty', goPtr(SECRET_KEY_SELECTOR)],
]);

const ENV_VAR = goStruct('EnvVar', [
  ['name', goString],
  ['value,omitempty', goString],
  ['valueFrom,omitempty', goPtr(ENV_VAR_SOURCE)],
]);

const RESOURCE_CLAIM = goStruct('ResourceClaim', [
  ['name', goString],
  ['request,omitempty', goString],
]);

const RESOURCE_REQUIREMENTS = goStruct('ResourceRequirements', [
  ['limits,omitempty', goMap(goQuantity)],
  ['requests,omitempty', goMap(goQuantity)],
  ['claims,omitempty', goSlice(RESOURCE_CLAIM)],
]);

const CONTAINER_RESIZE_POLICY = goStruct('ContainerResizePolicy', [
  ['resourceName', goString],
  ['restartPolicy', goString],
]);

const VOLUME_MOUNT = goStruct('VolumeMount', [
  ['name', goString],
  ['readOnly,omitempty', goBool],
  ['recursiveReadOnly,omitempty', optString],
  ['mountPath', goString],
  ['subPath,omitempty', goString],
  ['mountPropagation,omitempty', optString],
  ['subPathExpr,omitempty', goString],
]);

const VOLUME_DEVICE = goStruct('VolumeDevice', [
  ['name', goString],
  ['devicePath', goString],
]);

const EXEC_ACTION = goStruct('ExecAction', [['command,omitempty', strings]]);

const HTTP_HEADER = goStruct('HTTPHeader', [
  ['name', goString],
  ['value', goString],
]);

const HTTP_GET_ACTION = goStruct('HTTPGetAction', [
  ['path,omitempty', goString],
  ['port', goIntOrString],
  ['host,omitempty', goString],
  ['scheme,omitempty', goString],
  ['httpHeaders,omitempty', goSlice(HTTP_HEADER)],
]);

const TCP_SOCKET_ACTION = goStruct('TCPSocketAction', [
  ['port', goIntOrString],
  ['host,omitempty', goString],
]);

// `service` has no omitempty: an unset service is written as null.
const GRPC_ACTION = goStruct('GRPCAction', [
  ['port', goInt32],
  ['service', optString],
]);

const PROBE_HANDLER = goStruct('ProbeHandler', [
  ['exec,omitempty', goPtr(EXEC_ACTION)],
  ['httpGet,omitempty', goPtr(HTTP_GET_ACTION)],
  ['tcpSocket,omitempty', goPtr(TCP_SOCKET_ACTION)],
  ['grpc,omitempty', goPtr(GRPC_ACTION)],
]);

const PROBE = goStruct('Probe', [
  [',inline', PROBE_HANDLER],
  ['initialDelaySeconds,omitempty', goInt32],
  ['timeoutSeconds,omitempty', goInt32],
  ['periodSeconds,omitempty', goInt32],
  ['successThreshold,omitempty', goInt32],
  ['failureThreshold,omitempty', goInt32],
  ['terminationGracePeriodSeconds,omitempty', optInt64],
]);

const SLEEP_ACTION = goStruct('SleepAction', [['seconds', goInt64]]);

const LIFECYCLE_HANDLER = goStruct('LifecycleHandler', [
  ['exec,omitempty', goPtr(EXEC_ACTION)],
  ['httpGet,omitempty', goPtr(HTTP_GET_ACTION)],
  ['tcpSocket,omitempty', goPtr(TCP_SOCKET_ACTION)],
  ['sleep,omitempty', goPtr(SLEEP_ACTION)],
]);

const LIFECYCLE = goStruct('Lifecycle', [
  ['postStart,omitempty', goPtr(LIFECYCLE_HANDLER)],
  ['preStop,omitempty', goPtr(LIFECYCLE_HANDLER)],
]);

const CAPABILITIES = goStruct('Capabilities', [
  ['add,omitempty', strings],
  ['drop,omitempty', strings],
]);

const SE_LINUX_OPTIONS = goStruct('SELinuxOptions', [
  ['user,omitempty', goString],
  ['role,omitempty', goString],
  ['type,omitempty', goString],
  ['level,omitempty', goString],
]);

const WINDOWS_SECURITY_CONTEXT_OPTIONS = goStruct('WindowsSecurityContextOptions', [
  ['gmsaCredentialSpecName,omitempty', optString],
  ['gmsaCredentialSpec,omitempty', optString],
  ['runAsUserName,omitempty', optString],
  ['hostProcess,omitempty', optBool],
]);

const SECCOMP_PROFILE = goStruct('SeccompProfile', [
  ['type', goString],
  ['localhostProfile,omitempty', optString],
]);

const APP_ARMOR_PROFILE = goStruct('AppArmorProfile', [
  ['type', goString],
  ['localhostProfile,omitempty', optString],
]);

const SECURITY_CONTEXT = goStruct('SecurityContext', [
  ['capabilities,omitempty', goPtr(CAPABILITIES)],
  ['privileged,omitempty', optBool],
  ['seLinuxOptions,omitempty', goPtr(SE_LINUX_OPTIONS)],
  ['windowsOptions,omitempty', goPtr(WINDOWS_SECURITY_CONTEXT_OPTIONS)],
  ['runAsUser,omitempty', optInt64],
  ['runAsGroup,omitempty', optInt64],
  ['runAsNonRoot,omitempty', optBool],
  ['readOnlyRootFilesystem,omitempty', optBool],
  ['allowPrivilegeEscalation,omitempty', optBool],
  ['procMount,omitempty', optString],
  ['seccompProfile,omitempty', goPtr(SECCOMP_PROFILE)],
  ['appArmorProfile,omitempty', goPtr(APP_ARMOR_PROFILE)],
]);

export const CONTAINER = goStruct('Container', [
  ['name', goString],
  ['image,omitempty', goString],
  ['command,omitempty', strings],
  ['args,omitempty', strings],
  ['workingDir,omitempty', goString],
  ['ports,omitempty', goSlice(CONTAINER_PORT)],
  ['envFrom,omitempty', goSlice(ENV_FROM_SOURCE)],
  ['env,omitempty', goSlice(ENV_VAR)],
  // A struct: written as {} even when empty.
  ['resources,omitempty', RESOURCE_REQUIREMENTS],
  ['resizePolicy,omitempty', goSlice(CONTAINER_RESIZE_POLICY)],
  ['restartPolicy,omitempty', optString],
  ['volumeMounts,omitempty', goSlice(VOLUME_MOUNT)],
  ['volumeDevices,omitempty', goSlice(VOLUME_DEVICE)],
  ['livenessProbe,omitempty', goPtr(PROBE)],
  ['readinessProbe,omitempty', goPtr(PROBE)],
  ['startupProbe,omitempty', goPtr(PROBE)],
  ['lifecycle,omitempty', goPtr(LIFECYCLE)],
  ['terminationMessagePath,omitempty', goString],
  ['terminationMessagePolicy,omitempty', goString],
  ['imagePullPolicy,omitempty', goString],
  ['securityContext,omitempty', goPtr(SECURITY_CONTEXT)],
  ['stdin,omitempty', goBool],
  ['stdinOnce,omitempty', goBool],
  ['tty,omitempty', goBool],
]);

const SIDECAR_CONTAINER_UPGRADE_STRATEGY = goStruct('SidecarContainerUpgradeStrategy', [
  ['upgradeType,omitempty', goString],
  ['hotUpgradeEmptyImage,omitempty', goString],
]);

const SHARE_VOLUME_POLICY = goStruct('ShareVolumePolicy', [['type,omitempty', goString]]);

const SOURCE_CONTAINER_NAME_SOURCE = goStruct('SourceContainerNameSource', [
  ['fieldRef,omitempty', goPtr(OBJECT_FIELD_SELECTOR)],
]);

const TRANSFER_ENV_VAR = goStruct('TransferEnvVar', [
  ['sourceContainerName,omitempty', goString],
  ['sourceContainerNameFrom,omitempty', goPtr(SOURCE_CONTAINER_NAME_SOURCE)],
  ['envName,omitempty', goString],
  ['envNames,omitempty', strings],
]);

const RESOURCE_EXPR_VALUES = [
  ['cpu,omitempty', goString],
  ['memory,omitempty', goString],
] as const;

const RESOURCES_EXPR = goStruct('ResourcesExpr', [
  ['limits,omitempty', goPtr(goStruct('ResourceExprLimits', RESOURCE_EXPR_VALUES))],
  ['requests,omitempty', goPtr(goStruct('ResourceExprRequests', RESOURCE_EXPR_VALUES))],
]);

const RESOURCES_POLICY = goStruct('ResourcesPolicy', [
  ['targetContainersMode', goString],
  ['targetContainersNameRegex,omitempty', goString],
  ['resourcesExpr', RESOURCES_EXPR],
]);

/** apps.kruise.io/v1alpha1 SidecarContainer: core/v1 Container inlined, then Kruise's fields. */
export const SIDECAR_CONTAINER: GoStruct = goStruct('SidecarContainer', [
  [',inline', CONTAINER],
  ['podInjectPolicy,omitempty', goString],
  // Non-pointer structs: always written, as {} when unset.
  ['upgradeStrategy,omitempty', SIDECAR_CONTAINER_UPGRADE_STRATEGY],
  ['shareVolumePolicy,omitempty', SHARE_VOLUME_POLICY],
  ['shareVolumeDevicePolicy,omitempty', goPtr(SHARE_VOLUME_POLICY)],
  ['transferEnv,omitempty', goSlice(TRANSFER_ENV_VAR)],
  ['resourcesPolicy,omitempty', goPtr(RESOURCES_POLICY)],
]);
