/**
 * The SidecarSet validating webhook's rules (OpenKruise pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go) as a pure function. The input is a
 * defaulted SidecarSet; the result is Kubernetes-style field errors, empty when admitted.
 */
import type { LabelSelector, ObjectMeta } from '../api/k8s-types.js';
import type { SidecarSet, SidecarSetRevision, SidecarSetSpec } from '../api/sidecarset-types.js';
import type { FieldError } from './field-error.js';
import {
  childPath,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
  tooLong,
} from './field-error.js';
import {
  SIDECARSET_BASE,
  SIDECARSET_CANARY,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_V1ALPHA1_NAMESPACE,
  isReservedPodAnnotation,
} from '../api/annotations.js';
import { PATCH_POLICIES, V1BETA1 } from '../api/sidecarset-types.js';
import {
  byteLength,
  isDNS1123Label,
  isQualifiedName,
  isSelectorEmpty,
  isValidLabelValue,
  maxLenError,
  regexError,
  validateLabelSelector,
  validateLabels,
} from './names-and-selectors.js';
import { isIntOrPercentSet, validatePositiveIntOrPercent } from './int-or-percent.js';
import { validateInitSidecar, validateSidecar } from './sidecar-containers.js';
import { validateFakePodSpec } from './pod-spec.js';
import { validateHealthAnnotations } from './health-annotations.js';
import {
  validateCrossSidecarSetConflicts,
  validateContainerUpdate,
} from './sidecarset-conflicts.js';

export interface ValidationContext {
  /** Every SidecarSet known; one with the same name (the stored version of this one) is skipped. */
  others: readonly SidecarSet[];
  /** The stored object on UPDATE. */
  old?: SidecarSet;
  /**
   * Revisions for injectionStrategy.revision look-ups. Absent: the look-up is skipped (offline
   * use, where the cluster's ControllerRevisions are unknown); only the revision's shape is checked.
   */
  revisions?: readonly SidecarSetRevision[];
}

const NAME_MAX_LEN = 63;
const NAME_FMT = '^[a-zA-Z0-9\\-]+$';
const NAME_RE = /^[a-zA-Z0-9-]+$/;
const TOTAL_ANNOTATION_SIZE = 256 * 1024;

export function validateSidecarSet(ss: Readonly<SidecarSet>, ctx: ValidationContext): FieldError[] {
  const errs = validateMetadata(ss.metadata);
  errs.push(...validateHealthAnnotations(ss.metadata.annotations, oldAnnotations(ctx)));
  errs.push(...validateVersionFields(ss));
  errs.push(...validateCanary(ss, ctx));
  errs.push(...validateSpec(ss, ctx));
  if (ctx.old !== undefined)
    errs.push(...validateContainerUpdate(ss.spec.containers ?? [], ctx.old.spec.containers ?? []));
  if (errs.length > 0) return errs;
  return validateCrossSidecarSetConflicts(ss, ctx.others);
}

/** The stored object's annotations on UPDATE (none is an empty set); undefined on CREATE. */
function oldAnnotations(ctx: ValidationContext): Readonly<Record<string, string>> | undefined {
  return ctx.old === undefined ? undefined : (ctx.old.metadata.annotations ?? {});
}

function validateMetadata(meta: Readonly<ObjectMeta>): FieldError[] {
  const errs: FieldError[] = [];
  const name = meta.name ?? '';
  if (name === '') errs.push(required('metadata.name', 'name or generateName is required'));
  else {
    if (!NAME_RE.test(name)) {
      errs.push(
        invalid(
          'metadata.name',
          name,
          regexError(
            "sidecarset name must consist of alphanumeric characters or '-'",
            NAME_FMT,
            'example-com',
          ),
        ),
      );
    }
    if (byteLength(name) > NAME_MAX_LEN)
      errs.push(invalid('metadata.name', name, maxLenError(NAME_MAX_LEN)));
  }
  if ((meta.namespace ?? '') !== '')
    errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
  errs.push(...validateLabels(meta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  return errs;
}

/**
 * What one version has and the other says elsewhere. v1beta1 keeps the custom version in
 * spec.customVersion (a label value, as it becomes the ControllerRevision's label) and refuses
 * the v1alpha1 label, which would disagree with it when the SidecarSet is read as v1alpha1; v1alpha1
 * refuses the annotation the conversion keeps its namespace in. Rules of ours, so that either
 * version converts to the other and back unchanged (docs/adr/0015-sidecarset-v1beta1.md).
 */
function validateVersionFields(ss: Readonly<SidecarSet>): FieldError[] {
  const errs: FieldError[] = [];
  if (ss.apiVersion === V1BETA1) {
    const label = ss.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL];
    if (label !== undefined) {
      errs.push(
        forbidden(
          `metadata.labels[${SIDECARSET_CUSTOM_VERSION_LABEL}]`,
          'in apps.kruise.io/v1beta1 the custom version is spec.customVersion',
        ),
      );
    }
    const version = ss.spec.customVersion ?? '';
    for (const msg of isValidLabelValue(version))
      errs.push(invalid('spec.customVersion', version, msg));
    return errs;
  }
  if (ss.metadata.annotations?.[SIDECARSET_V1ALPHA1_NAMESPACE] !== undefined) {
    errs.push(
      forbidden(
        `metadata.annotations[${SIDECARSET_V1ALPHA1_NAMESPACE}]`,
        'kept by the conversion to apps.kruise.io/v1beta1; set spec.namespace instead',
      ),
    );
  }
  return errs;
}

/** apimachinery ValidateAnnotations: keys are qualified names (case-insensitive), 256 KiB total. */
function validateAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const key of Object.keys(annotations ?? {}).sort()) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(invalid(path, key, msg));
    size += byteLength(key) + byteLength(annotations?.[key] ?? '');
  }
  if (size > TOTAL_ANNOTATION_SIZE) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE));
  return errs;
}

function canaryBase(ss: Readonly<SidecarSet>): string | undefined {
  const a = ss.metadata.annotations ?? {};
  const base = a[SIDECARSET_BASE] ?? '';
  return a[SIDECARSET_CANARY] === 'true' && base !== '' ? base : undefined;
}

/** Canary/base SidecarSets (apps.kruise.io/sidecarset-canary and -base, OpenKruise apis/apps/v1beta1/sidecarset_types.go); every error is at `metadata` with the annotations. */
function validateCanary(ss: Readonly<SidecarSet>, ctx: ValidationContext): FieldError[] {
  const base = canaryBase(ss);
  if (base === undefined) return [];
  const annotations = sortedRecord(ss.metadata.annotations ?? {});
  const err = (detail: string): FieldError => invalid('metadata', annotations, detail);
  const errs: FieldError[] = [];
  if (base === ss.metadata.name) errs.push(err('base sidecarSet cannot be itself'));
  if (ctx.old !== undefined && ctx.old.metadata.annotations?.[SIDECARSET_BASE] !== base) {
    errs.push(err(`annotations[${SIDECARSET_BASE}] is immutable`));
  }
  const baseSet = base === ss.metadata.name ? ss : ctx.others.find((o) => o.metadata.name === base);
  if (baseSet === undefined) {
    errs.push(
      err(`fetch base sidecarSet[${base}] failed: sidecarsets.apps.kruise.io "${base}" not found`),
    );
  } else if (canaryBase(baseSet) !== undefined) {
    errs.push(err('base sidecarSet cannot be canary'));
  }
  if (ss.spec.updateStrategy?.type !== 'NotUpdate')
    errs.push(err('RollingUpdate is not supported for canary sidecarSet'));
  return errs;
}

function sortedRecord(r: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k] ?? '']),
  );
}

function validateSpec(ss: Readonly<SidecarSet>, ctx: ValidationContext): FieldError[] {
  const spec = ss.spec;
  const errs: FieldError[] = [];
  // OpenKruise refuses native sidecars (init containers with restartPolicy Always) under
  // RollingUpdate; they are upgraded in place here (docs/adr/0022-resources-and-native-sidecars-in-place.md).
  if (spec.selector === undefined)
    errs.push(required('spec.selector', 'no selector defined for SidecarSet'));
  else errs.push(...validateSelector(spec.selector, 'spec.selector'));
  errs.push(...validateNamespace(spec));
  errs.push(...validateInjectionStrategy(ss, ctx.revisions));
  errs.push(...validateUpdateStrategy(spec));
  errs.push(...validateAllContainers(spec));
  errs.push(...validatePatchPodMetadata(spec));
  return errs;
}

/**
 * OpenKruise's validateSelector: the standard checks, non-empty, and a second error when the
 * selector cannot be converted (LabelSelectorAsSelector fails exactly when the checks do).
 */
function validateSelector(selector: Readonly<LabelSelector>, path: string): FieldError[] {
  const errs = validateLabelSelector(selector, path);
  const convertible = errs.length === 0;
  if (isSelectorEmpty(selector))
    errs.push(invalid(path, selector, 'empty selector is not valid for sidecarset.'));
  if (!convertible) errs.push(invalid(childPath(path, 'selector'), selector, ''));
  return errs;
}

function validateNamespace(spec: Readonly<SidecarSetSpec>): FieldError[] {
  const errs: FieldError[] = [];
  const ns = spec.namespace ?? '';
  if (ns !== '') {
    for (const msg of isDNS1123Label(ns)) errs.push(invalid('spec.namespace', ns, msg));
  }
  if (spec.namespaceSelector !== undefined) {
    errs.push(...validateSelector(spec.namespaceSelector, 'spec.namespaceSelector'));
    // v1.8 behaviour. From v1.9 the v1alpha1→v1beta1 conversion drops namespaceSelector instead
    // ("namespace wins" in OpenKruise's v1beta1 conversion); rejecting keeps a manifest's meaning unambiguous.
    if (ns !== '') {
      errs.push(
        invalid('spec.namespace', ns, 'namespace and namespaceSelector are mutually exclusive'),
      );
    }
  }
  return errs;
}

function validateInjectionStrategy(
  ss: Readonly<SidecarSet>,
  revisions: readonly SidecarSetRevision[] | undefined,
): FieldError[] {
  const info = ss.spec.injectionStrategy?.revision;
  if (info === undefined) return [];
  const path = 'spec.injectionStrategy.revision';
  const errs: FieldError[] = [];
  if (info.revisionName === undefined && info.customVersion === undefined) {
    errs.push(invalid(path, info, 'revisionName and customVersion cannot be empty simultaneously'));
  } else if (revisions !== undefined) {
    const missing = findRevisionError(ss, info.revisionName, info.customVersion, revisions);
    if (missing !== undefined)
      errs.push(invalid(path, null, `Cannot find specific ControllerRevision, err: ${missing}`));
  }
  const policy = info.policy ?? '';
  if (policy !== '' && policy !== 'Always' && policy !== 'Partial') {
    errs.push(
      invalid(
        childPath(path, 'policy'),
        info,
        `Invalid policy ${policy}, supported: [Always, Partial]`,
      ),
    );
  }
  return errs;
}

/** GetHistorySidecarSet's look-up: revisionName by name, else the custom version for this set. */
function findRevisionError(
  ss: Readonly<SidecarSet>,
  revisionName: string | undefined,
  customVersion: string | undefined,
  revisions: readonly SidecarSetRevision[],
): string | undefined {
  if (revisionName !== undefined) {
    return revisions.some((r) => r.name === revisionName)
      ? undefined
      : `controllerrevisions.apps "${revisionName}" not found`;
  }
  const name = ss.metadata.name ?? '';
  const found = revisions.some(
    (r) => r.sidecarSetName === name && r.customVersion === customVersion,
  );
  return found ? undefined : `ControllerRevision.apps "${name}" not found`;
}

function validateUpdateStrategy(spec: Readonly<SidecarSetSpec>): FieldError[] {
  const s = spec.updateStrategy;
  if (s?.type !== 'RollingUpdate') return [];
  const path = 'spec.updateStrategy';
  const errs: FieldError[] = [];
  if (isIntOrPercentSet(s.partition) && s.selector !== undefined) {
    errs.push(invalid(path, s, 'Partition and Selector cannot be used together'));
  }
  if (s.selector !== undefined)
    errs.push(...validateSelector(s.selector, childPath(path, 'selector')));
  if (s.partition !== undefined)
    errs.push(...validatePositiveIntOrPercent(s.partition, childPath(path, 'partition')));
  if (s.maxUnavailable !== undefined) {
    errs.push(...validatePositiveIntOrPercent(s.maxUnavailable, childPath(path, 'maxUnavailable')));
  }
  const priority = priorityError(s.priorityStrategy);
  if (priority !== undefined) errs.push(required(childPath(path, 'priorityStrategy'), priority));
  const scatter = scatterError(s.scatterStrategy);
  if (scatter !== undefined) errs.push(required(childPath(path, 'scatterStrategy'), scatter));
  return errs;
}

type Strategy = NonNullable<SidecarSetSpec['updateStrategy']>;

function priorityError(p: Strategy['priorityStrategy']): string | undefined {
  if (p === undefined) return undefined;
  const weights = p.weightPriority ?? [];
  const orders = p.orderPriority ?? [];
  if (weights.length > 0 && orders.length > 0)
    return 'only one of weightPriority and orderPriority can be used';
  for (const w of weights) {
    if (w.weight < 0 || w.weight > 100) return 'weight must be valid number in the range 1-100';
    if (isSelectorEmpty(w.matchSelector)) return 'selector can not be empty';
    const bad = validateLabelSelector(w.matchSelector, '')[0];
    if (bad !== undefined) return `invalid selector ${bad.detail}`;
  }
  return orders.some((o) => o.orderedKey === '') ? 'order key can not be empty' : undefined;
}

/**
 * Key-only terms (value "*" or missing; docs/adr/0003-stable-upgrade-order.md) are allowed; "*"
 * and missing are the same term.
 */
function scatterError(terms: Strategy['scatterStrategy']): string | undefined {
  const seen = new Set<string>();
  for (const t of terms ?? []) {
    if (t.key === '') return 'key should not be empty';
    const value = t.value ?? '*';
    const id = `${t.key}:${value}`;
    if (seen.has(id)) return `duplicated key=${t.key} value=${value}`;
    seen.add(id);
  }
  return undefined;
}

function validateAllContainers(spec: Readonly<SidecarSetSpec>): FieldError[] {
  const inits = spec.initContainers ?? [];
  const containers = spec.containers ?? [];
  if (inits.length === 0 && containers.length === 0) {
    return [required('spec', 'no initContainer or container defined for SidecarSet')];
  }
  const errs: FieldError[] = [];
  inits.forEach((c, i) =>
    errs.push(...validateInitSidecar(c, indexPath('spec.initContainers', i))),
  );
  containers.forEach((c, i) => errs.push(...validateSidecar(c, indexPath('spec.containers', i))));
  errs.push(...validateFakePodSpec({ initContainers: inits, containers, volumes: spec.volumes }));
  return errs;
}

/**
 * patchPodMetadata's shape and the keys no SidecarSet may write. Which other keys one may write is
 * the webhook's allow-list (patch-metadata-allowlist.ts), a setting of the installation that
 * files of SidecarSets, checked here too, do not have.
 */
function validatePatchPodMetadata(spec: Readonly<SidecarSetSpec>): FieldError[] {
  const errs: FieldError[] = [];
  const keys = new Set<string>();
  (spec.patchPodMetadata ?? []).forEach((patch, i) => {
    const p = indexPath('spec.patchPodMetadata', i);
    const annotations = patch.annotations ?? {};
    if (Object.keys(annotations).length === 0)
      errs.push(required('spec.patchPodMetadata', 'no annotations defined for SidecarSet'));
    else errs.push(...validateAnnotations(annotations, childPath(p, 'annotations')));
    const policy = patch.patchPolicy ?? '';
    if (policy === '')
      errs.push(required('spec.patchPodMetadata', 'no patchPolicy defined for patchPodMetadata'));
    else if (!(PATCH_POLICIES as readonly string[]).includes(policy)) {
      errs.push(notSupported(childPath(p, 'patchPolicy'), policy, PATCH_POLICIES));
    }
    for (const k of Object.keys(annotations).sort()) {
      if (keys.has(k))
        errs.push(required('spec.patchPodMetadata', `patch annotation[${k}] already exist`));
      keys.add(k);
      if (isReservedPodAnnotation(k)) {
        errs.push(
          forbidden(
            indexPath(childPath(p, 'annotations'), k),
            'the key holds SidecarSet bookkeeping: patchPodMetadata may not write it',
          ),
        );
      }
    }
  });
  return errs;
}

export { validateSidecarSetSchema } from './schema-check.js';
