/**
 * resourcesPolicy at injection (OpenKruise pkg/webhook/pod/mutating/sidecarset_resources.go): at pod creation a sidecar's
 * `resources` is replaced by values computed from the pod's own containers. Mirrors OpenKruise's
 * pkg/webhook/pod/mutating/sidecarset_resources.go and the arithmetic of pkg/util/calculator,
 * which works on resource.Quantity: sums and comparisons are exact, `quantity × number` and
 * `quantity ÷ number` go through float64 millis truncated to an integer, and a plain number meets
 * a quantity as truncated millis. The results are written as Go marshals the Quantity.
 */
import { SidecarSetError } from '../errors.js';
import type { JsonObject } from '../encoding/json.js';
import { isPlainObject } from '../encoding/json.js';
import type { GoRegexp } from '../encoding/go-regexp.js';
import { compileGoRegexp } from '../encoding/go-regexp.js';
import type { Container, Pod } from '../api/k8s-types.js';
import type { Quantity } from '../encoding/quantity.js';
import {
  aligned,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  roundUpQuantity,
} from '../encoding/quantity.js';
import type { ResourcesPolicy, SidecarSet } from '../api/sidecarset-types.js';
import type { ExprAlgebra } from './resource-expression.js';
import { evaluateExpression, ResourceExpressionError } from './resource-expression.js';

type PolicyResource = 'cpu' | 'memory';
const RESOURCES: readonly PolicyResource[] = ['cpu', 'memory'];

type ResourceQuantities = Partial<Record<PolicyResource, Quantity>>;

/** The aggregate of the target containers; a limit that is absent is unlimited. */
export interface AggregatedResources {
  limits: ResourceQuantities;
  requests: ResourceQuantities;
}

/** Where the policy is applied, for target selection and error messages. */
export interface PolicyContext {
  /** The pod as it was before injection. */
  pod: Readonly<Pod>;
  /** Every container name the SidecarSets injected into this pod declare (declaredContainerNames). */
  sidecarSetContainers: ReadonlySet<string>;
  /** The SidecarSet's name, for messages. */
  sidecarSet: string | undefined;
}

/**
 * The names of spec.containers and spec.initContainers of all the SidecarSets injected into a
 * pod: the containers a policy never targets. As upstream, the names as declared (a hot-upgrade
 * sidecar's `-1`/`-2` pod names are not added).
 */
export function declaredContainerNames(sets: readonly SidecarSet[]): Set<string> {
  const names = new Set<string>();
  for (const ss of sets) {
    for (const c of ss.spec.initContainers ?? []) names.add(c.name);
    for (const c of ss.spec.containers ?? []) names.add(c.name);
  }
  return names;
}

/**
 * Replaces the sidecar container's `resources` with the computed limits and requests, each left
 * out when empty (Go replaces the whole ResourceRequirements, claims included). Throws
 * SidecarSetError SI_ERR_RESOURCES_POLICY.
 */
export function applyResourcesPolicy(
  container: Container,
  policy: ResourcesPolicy,
  ctx: PolicyContext,
): void {
  const resources = computePolicyResources(policy, container.name, ctx);
  if (Object.keys(resources).length > 0) container.resources = resources;
  else delete container.resources;
}

/** The sidecar's computed `resources` (see applyResourcesPolicy). */
function computePolicyResources(
  policy: ResourcesPolicy,
  containerName: string,
  ctx: PolicyContext,
): JsonObject {
  const fail = (why: string): SidecarSetError =>
    new SidecarSetError(
      'SI_ERR_RESOURCES_POLICY',
      `SidecarSet ${ctx.sidecarSet ?? ''} container ${containerName}: resourcesPolicy: ${why}`,
    );
  const pattern = policy.targetContainersNameRegex ?? '.*';
  const regex = compileGoRegexp(pattern);
  if ('error' in regex) {
    throw fail(`invalid regex pattern ${JSON.stringify(pattern)}: ${regex.error}`);
  }
  const targets = targetContainers(ctx.pod, regex, ctx.sidecarSetContainers);
  if (targets.length === 0) {
    throw fail(`no containers match the regex pattern ${JSON.stringify(pattern)}`);
  }
  const aggregate = aggregateResources(targets, policy.targetContainersMode ?? '');
  const out: JsonObject = {};
  for (const kind of ['limits', 'requests'] as const) {
    const exprs = policy.resourcesExpr?.[kind];
    if (exprs === undefined) continue;
    const list: JsonObject = {};
    for (const resource of RESOURCES) {
      const expr = exprs[resource] ?? '';
      // An unlimited aggregate limit leaves the limit unset; a missing request is zero.
      const value = kind === 'limits' ? aggregate.limits[resource] : aggregate.requests[resource];
      if (expr === '' || (kind === 'limits' && value === undefined)) continue;
      try {
        list[resource] = formatQuantity(evaluatePolicyExpression(expr, value ?? ZERO));
      } catch (e) {
        /* c8 ignore next -- evaluation throws only ResourceExpressionError */
        if (!(e instanceof ResourceExpressionError)) throw e;
        const name = resource === 'cpu' ? 'CPU' : 'memory';
        throw fail(
          `failed to evaluate ${name} ${kind} expression ${JSON.stringify(expr)}: ${e.message}`,
        );
      }
    }
    if (Object.keys(list).length > 0) out[kind] = list;
  }
  return out;
}

/**
 * Native-sidecar init containers, then plain containers, whose names match (unanchored, as Go's
 * MatchString) and are not declared by a SidecarSet.
 */
export function targetContainers(
  pod: Readonly<Pod>,
  regex: GoRegexp,
  excluded: ReadonlySet<string>,
): Container[] {
  const eligible = (c: Container): boolean => !excluded.has(c.name) && regex.matches(c.name);
  return [
    ...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always' && eligible(c)),
    ...pod.spec.containers.filter(eligible),
  ];
}

/** Sum or max of the targets' cpu and memory; any other mode yields nothing (as upstream). */
export function aggregateResources(
  containers: readonly Container[],
  mode: string,
): AggregatedResources {
  const out: AggregatedResources = { limits: {}, requests: {} };
  if (mode !== 'sum' && mode !== 'max') return out;
  for (const resource of RESOURCES) {
    let limit: Quantity | undefined;
    let unlimited = false;
    let request: Quantity | undefined;
    for (const c of containers) {
      const l = resourceQuantity(c, 'limits', resource);
      if (l === undefined) unlimited = true;
      else limit = combine(mode, limit, l);
      const r = resourceQuantity(c, 'requests', resource);
      if (r !== undefined) request = combine(mode, request, r);
    }
    if (!unlimited && limit !== undefined) out.limits[resource] = limit;
    // Go keeps a zero sum out of the map; a max keeps whatever it found. Either reads as zero.
    if (request !== undefined && !(mode === 'sum' && request.mantissa === 0n)) {
      out.requests[resource] = request;
    }
  }
  return out;
}

/** Go starts a sum from NewQuantity(0, DecimalSI); a max keeps the first of equal values. */
function combine(mode: 'sum' | 'max', acc: Quantity | undefined, q: Quantity): Quantity {
  if (mode === 'sum') return addQuantities(acc ?? ZERO, q);
  return acc === undefined || compareQuantities(q, acc) > 0 ? q : acc;
}

function resourceQuantity(
  c: Container,
  kind: 'limits' | 'requests',
  resource: PolicyResource,
): Quantity | undefined {
  const list = c.resources?.[kind];
  const raw = isPlainObject(list) ? list[resource] : undefined;
  if (raw === undefined) return undefined;
  // The API server decodes null as the zero Quantity and sends it on as "0".
  if (raw === null) return parseQuantity('0');
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    throw new SidecarSetError(
      'SI_ERR_BAD_INPUT',
      `container ${c.name}: resources.${kind}.${resource} is not a quantity`,
      400,
    );
  }
  return parseQuantity(raw);
}

/**
 * Evaluates one expression as the webhook does: the variable is `memory` when the text contains
 * the word memory, else `cpu`, bound to the aggregate. A plain-number result (one that never met
 * a quantity, so its text cannot use the `memory` variable) becomes NewMilliQuantity(int64(n ×
 * 1000), DecimalSI), even in a memory field. Throws ResourceExpressionError.
 */
export function evaluatePolicyExpression(expr: string, aggregate: Quantity): Quantity {
  const variable = /\bmemory\b/.test(expr) ? 'memory' : 'cpu';
  const result = evaluateExpression(expr, QUANTITY_ALGEBRA, {
    [variable]: { kind: 'quantity', q: aggregate },
  });
  if (!result.ok) throw new ResourceExpressionError(result.error);
  return toQuantity(result.value);
}

/** The calculator's Value: a float64 number or a resource.Quantity. */
type GoValue = { kind: 'quantity'; q: Quantity } | { kind: 'number'; n: number };

const ZERO: Quantity = { mantissa: 0n, scale: 0, format: 'DecimalSI' };

/** Go's int64(f): truncation; out of range is undefined behaviour in Go, an error here. */
function truncInt64(f: number): bigint {
  if (!Number.isFinite(f) || Math.abs(f) >= 2 ** 63) {
    throw new ResourceExpressionError(`value out of range: ${f}`);
  }
  return BigInt(Math.trunc(f));
}

/** resource.NewMilliQuantity(int64(n*1000), DecimalSI). */
function milliQuantity(n: number): Quantity {
  return { mantissa: truncInt64(n * 1000), scale: -3, format: 'DecimalSI' };
}

function toQuantity(v: GoValue): Quantity {
  return v.kind === 'quantity' ? v.q : milliQuantity(v.n);
}

/** Quantity.Add: exact; the format is the left one's unless the left is zero. */
function addQuantities(a: Quantity, b: Quantity): Quantity {
  const [x, y] = aligned(a, b);
  return {
    mantissa: x + y,
    scale: Math.min(a.scale, b.scale),
    format: a.mantissa === 0n ? b.format : a.format,
  };
}

function negateQuantity(q: Quantity): Quantity {
  return { mantissa: -q.mantissa, scale: q.scale, format: q.format };
}

/** Quantity.MilliValue(): rounded up (away from zero) to millis. */
function milliValue(q: Quantity): bigint {
  const r = roundUpQuantity(q, -3);
  return r.mantissa * 10n ** BigInt(r.scale + 3);
}

/** q.SetMilli(int64(float64(q.MilliValue()) op n)): the format stays, the value becomes millis. */
function scaleMillis(q: Quantity, apply: (millis: number) => number): GoValue {
  const mantissa = truncInt64(apply(Number(milliValue(q))));
  return { kind: 'quantity', q: { mantissa, scale: -3, format: q.format } };
}

/** max()/min(): the left one on a tie; a number meets a quantity as truncated millis. */
function pick(a: GoValue, b: GoValue, fn: 'max' | 'min'): GoValue {
  if (a.kind === 'number' && b.kind === 'number') {
    return (fn === 'max' ? a.n >= b.n : a.n <= b.n) ? a : b;
  }
  const left = toQuantity(a);
  const right = toQuantity(b);
  const cmp = compareQuantities(left, right);
  return { kind: 'quantity', q: (fn === 'max' ? cmp >= 0 : cmp <= 0) ? left : right };
}

function bothNumbers(a: GoValue, b: GoValue): [number, number] | undefined {
  return a.kind === 'number' && b.kind === 'number' ? [a.n, b.n] : undefined;
}

const QUANTITY_ALGEBRA: ExprAlgebra<GoValue> = {
  number: (n) => ({ kind: 'number', n }),
  quantity(text) {
    try {
      return { kind: 'quantity', q: parseQuantity(text) };
    } catch (e) {
      /* c8 ignore next -- parseQuantity throws only SidecarSetError */
      if (!(e instanceof SidecarSetError)) throw e;
      throw new ResourceExpressionError(`invalid quantity: ${text}`);
    }
  },
  negate: (v) =>
    v.kind === 'number'
      ? { kind: 'number', n: -v.n }
      : { kind: 'quantity', q: negateQuantity(v.q) },
  add(a, b) {
    const nums = bothNumbers(a, b);
    if (nums !== undefined) return { kind: 'number', n: nums[0] + nums[1] };
    return { kind: 'quantity', q: addQuantities(toQuantity(a), toQuantity(b)) };
  },
  subtract(a, b) {
    const nums = bothNumbers(a, b);
    if (nums !== undefined) return { kind: 'number', n: nums[0] - nums[1] };
    return { kind: 'quantity', q: addQuantities(toQuantity(a), negateQuantity(toQuantity(b))) };
  },
  multiply(a, b) {
    if (a.kind === 'quantity') {
      if (b.kind === 'quantity')
        throw new ResourceExpressionError('multiplication of two quantities');
      return scaleMillis(a.q, (m) => m * b.n);
    }
    if (b.kind === 'quantity') return scaleMillis(b.q, (m) => m * a.n);
    return { kind: 'number', n: a.n * b.n };
  },
  divide(a, b) {
    if (b.kind === 'quantity') throw new ResourceExpressionError('division by quantity');
    if (b.n === 0) throw new ResourceExpressionError('division by zero');
    if (a.kind === 'quantity') return scaleMillis(a.q, (m) => m / b.n);
    return { kind: 'number', n: a.n / b.n };
  },
  max: (a, b) => pick(a, b, 'max'),
  min: (a, b) => pick(a, b, 'min'),
  negative(v) {
    if (v.kind === 'number') return v.n < 0 ? String(v.n) : undefined;
    return v.q.mantissa < 0n ? formatQuantity(v.q) : undefined;
  },
};
