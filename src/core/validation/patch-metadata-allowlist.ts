/**
 * Which pod annotations a SidecarSet's patchPodMetadata may write: OpenKruise's whitelist, in the
 * form of the `SidecarSet_PatchPodMetadata_WhiteList` key of its `kruise-configuration` ConfigMap
 * (pkg/util/configuration; checked by validateSidecarSetPatchMetadataWhitelist,
 * pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go):
 *
 *   {"rules": [{"selector": {"matchLabels": {…}}, "allowedAnnotationKeyExprs": ["^example\\.com/"]}]}
 *
 * A rule applies to the SidecarSets its selector matches by their own labels (every SidecarSet
 * without one); each key must match one expression of an applicable rule (Go's regexp,
 * unanchored). Without an allow-list nothing may be written, as in OpenKruise without the feature
 * gate SidecarSetPatchPodMetadataDefaultsAllowed: writing any pod annotation lets a SidecarSet
 * author change what other controllers read (docs/security.md, docs/adr/0035-patch-pod-metadata-allow-list.md).
 * Unlike OpenKruise, an expression that does not compile is refused when the list is read, not
 * skipped; the bookkeeping keys are refused whatever the list says (validation/sidecarset.ts).
 */
import type { LabelSelector } from '../api/k8s-types.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { isPlainObject } from '../encoding/json.js';
import { compileGoRegexp } from '../encoding/go-regexp.js';
import type { GoRegexp } from '../encoding/go-regexp.js';
import { SidecarSetError } from '../errors.js';
import { validSelectorMatches } from '../matching/selector.js';
import type { FieldError } from './field-error.js';
import { childPath, forbidden, indexPath } from './field-error.js';

interface AllowRule {
  readonly selector?: LabelSelector;
  readonly keys: readonly GoRegexp[];
}

export interface PatchMetadataAllowList {
  readonly rules: readonly AllowRule[];
}

/** The allow-list from its JSON, or a SidecarSetError that says what is wrong with it. */
export function parseAllowList(json: string): PatchMetadataAllowList {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (err) {
    throw badAllowList(`the patchPodMetadata allow-list is not JSON: ${String(err)}`);
  }
  const rules = isPlainObject(doc) ? doc['rules'] : undefined;
  if (!Array.isArray(rules)) {
    throw badAllowList('the patchPodMetadata allow-list needs "rules": a list of rules');
  }
  return { rules: rules.map(parseRule) };
}

function badAllowList(message: string): SidecarSetError {
  return new SidecarSetError('SI_ERR_BAD_INPUT', message, 400);
}

function parseRule(rule: unknown, i: number): AllowRule {
  const at = `the patchPodMetadata allow-list's rules[${i}]`;
  if (!isPlainObject(rule)) throw badAllowList(`${at} is not an object`);
  const exprs = rule['allowedAnnotationKeyExprs'] ?? [];
  if (!Array.isArray(exprs) || !exprs.every((e) => typeof e === 'string')) {
    throw badAllowList(`${at}.allowedAnnotationKeyExprs is not a list of strings`);
  }
  const keys = exprs.map((expr, j) => {
    const compiled = compileGoRegexp(expr);
    if ('error' in compiled) {
      throw badAllowList(`${at}.allowedAnnotationKeyExprs[${j}]: ${compiled.error}`);
    }
    return compiled;
  });
  const selector = rule['selector'];
  if (selector === undefined || selector === null) return { keys };
  if (!isPlainObject(selector)) throw badAllowList(`${at}.selector is not a label selector`);
  return { selector: selector, keys };
}

/**
 * Every patchPodMetadata key the allow-list does not let this SidecarSet write, with OpenKruise's
 * messages; `allowList` undefined: none configured.
 */
export function disallowedPatchKeys(
  ss: Readonly<SidecarSet>,
  allowList: PatchMetadataAllowList | undefined,
): FieldError[] {
  const patches = ss.spec.patchPodMetadata ?? [];
  if (patches.length === 0) return [];
  const field = 'spec.patchPodMetadata';
  if (allowList === undefined) {
    return [
      forbidden(
        field,
        'SidecarSet patch metadata whitelist not found: no allow-list is configured ' +
          '(--patch-pod-metadata-allowlist, docs/security.md)',
      ),
    ];
  }
  const labels = ss.metadata.labels ?? {};
  const rules = allowList.rules.filter(
    (r) => r.selector === undefined || validSelectorMatches(r.selector, labels),
  );
  if (rules.length === 0) {
    return [forbidden(field, 'sidecarSet patch metadata annotation is not allowed')];
  }
  const errs: FieldError[] = [];
  patches.forEach((patch, i) => {
    for (const key of Object.keys(patch.annotations ?? {}).sort()) {
      if (rules.some((r) => r.keys.some((k) => k.matches(key)))) continue;
      const path = indexPath(childPath(indexPath(field, i), 'annotations'), key);
      errs.push(forbidden(path, `sidecarSet patch metadata annotation(${key}) is not allowed`));
    }
  });
  return errs;
}
