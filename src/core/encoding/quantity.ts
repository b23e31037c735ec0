/**
 * Kubernetes resource.Quantity (k8s.io/apimachinery v0.32, the version OpenKruise HEAD vendors):
 * parsing, RoundUp and the JSON form, byte for byte. The SidecarSet hash covers the JSON form of
 * `resources`, so "1000m" and "1" must serialise exactly as Go does ("1"), and a string Go keeps
 * verbatim ("1e3", "100m") must stay verbatim.
 */
import { SidecarSetError } from '../errors.js';

type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** value = mantissa × 10^scale. */
export interface Quantity {
  readonly mantissa: bigint;
  readonly scale: number;
  readonly format: QuantityFormat;
  /**
   * The input text when Go keeps it (Quantity.s): only on its int64 fast path and only when the
   * text is already canonical. MarshalJSON then writes it unchanged.
   */
  readonly cached?: string;
}

const MAX_INT64 = (1n << 63n) - 1n;
const NANO = -9;
const MILLI = -3;

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};
const SUFFIX_LETTERS = 'eEinumkKMGTP';
const BINARY_NAMES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

function invalid(text: string, why: string): SidecarSetError {
  return new SidecarSetError('SI_ERR_BAD_INPUT', `quantity "${text}" is invalid: ${why}`, 400);
}

interface Scanned {
  positive: boolean;
  /** Sign, integer part and fraction as written (Go's `value`). */
  value: string;
  /** Integer digits without leading zeros ("0" when none). */
  num: string;
  denom: string;
  suffix: string;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function skipDigits(str: string, from: number): number {
  let i = from;
  while (isDigit(str[i])) i++;
  return i;
}

/** Go's parseQuantityString: number, fraction and suffix, permissive about the suffix. */
function scan(str: string): Scanned | undefined {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  let i = skipDigits(str, pos);
  const num = str.slice(pos, i) || '0';
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = skipDigits(str, pos);
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_LETTERS.includes(str[pos] ?? '')) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  if (skipDigits(str, pos) < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 10 | 2;
  exponent: number;
  format: QuantityFormat;
}

function interpretSuffix(suffix: string): Suffix | undefined {
  const dec = DECIMAL_SUFFIXES[suffix];
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BINARY_SUFFIXES[suffix];
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (/^[eE][+-]?\d+$/.test(suffix)) {
    const parsed = BigInt(suffix.slice(1));
    if (parsed > MAX_INT64 || parsed < -MAX_INT64 - 1n) return undefined;
    // Go parses an int64 and then converts it to int32, wrapping.
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

/** Go's strings.TrimSpace (Unicode White_Space), which UnmarshalJSON applies. */
function trimGoSpace(text: string): string {
  const space =
    '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+';
  return text.replace(new RegExp(`^${space}|${space}$`, 'g'), '');
}

/**
 * Parses a quantity as Quantity.UnmarshalJSON does (a JSON string or number). Throws
 * SidecarSetError SI_ERR_BAD_INPUT where Go returns an error.
 */
export function parseQuantity(input: string | number): Quantity {
  const str = typeof input === 'number' ? numberText(input) : trimGoSpace(input);
  if (str === '') throw invalid(str, 'it is empty');
  if (str === '0') return { mantissa: 0n, scale: 0, format: 'DecimalSI', cached: str };
  const scanned = scan(str);
  if (scanned === undefined)
    throw invalid(str, 'it does not match ^[+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*$');
  const suffix = interpretSuffix(scanned.suffix);
  if (suffix === undefined) throw invalid(str, `unknown suffix "${scanned.suffix}"`);
  return fastPath(str, scanned, suffix) ?? decimalPath(str, scanned, suffix);
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) throw invalid(String(n), 'it is not a finite number');
  return String(n);
}

/** Go's int64 path; the only one on which the input text can be kept. */
function fastPath(str: string, s: Scanned, suffix: Suffix): Quantity | undefined {
  let scale = 0;
  let precision: number;
  let multiplier = 1n;
  if (suffix.base === 10) {
    scale = suffix.exponent;
    precision = 18 - (s.num.length + s.denom.length);
  } else if (s.denom === '') {
    multiplier = 1n << BigInt(suffix.exponent);
    precision = 15 - s.num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
  } else {
    return undefined;
  }
  if (precision < 0) return undefined;
  scale -= s.denom.length;
  if (scale < NANO) return undefined;
  const shifted = s.num + s.denom;
  const digits = BigInt(shifted);
  const magnitude = digits * multiplier;
  if (magnitude > MAX_INT64) return undefined;
  const mantissa = s.positive ? magnitude : -magnitude;
  const keep =
    suffix.format === 'BinarySI'
      ? suffix.exponent % 10 === 0 && (digits & 7n) !== 0n
      : scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
  const q: Quantity = { mantissa, scale, format: suffix.format };
  return keep ? { ...q, cached: str } : q;
}

/** Go's inf.Dec path: exact decimal, rounded up to nano, BinarySI capped at MaxInt64. */
function decimalPath(str: string, s: Scanned, suffix: Suffix): Quantity {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(s.value);
  const intPart = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (intPart + fraction === '') throw invalid(str, 'its number has no digits');
  let magnitude = BigInt(intPart + fraction);
  let scale = -fraction.length;
  if (suffix.base === 10) scale += suffix.exponent;
  else magnitude <<= BigInt(suffix.exponent);
  let format = suffix.format;
  if (magnitude !== 0n) [magnitude, scale] = ceilToScale(magnitude, scale, NANO);
  if (format === 'BinarySI') {
    if (compareMagnitude(magnitude, scale, MAX_INT64) > 0) [magnitude, scale] = [MAX_INT64, 0];
    if (magnitude !== 0n && compareMagnitude(magnitude, scale, 1n) < 0) format = 'DecimalSI';
  }
  return { mantissa: match?.[1] === '-' ? -magnitude : magnitude, scale, format };
}

/** Rounds |m| × 10^scale up (away from zero) to at most `target` decimal places. */
function ceilToScale(magnitude: bigint, scale: number, target: number): [bigint, number] {
  if (scale >= target) return [magnitude, scale];
  const drop = target - scale;
  // 10^drop exceeds magnitude: the result is one unit (avoids building huge powers of ten).
  if (drop > magnitude.toString().length) return [magnitude === 0n ? 0n : 1n, target];
  const divisor = 10n ** BigInt(drop);
  const quotient = magnitude / divisor;
  return [magnitude % divisor === 0n ? quotient : quotient + 1n, target];
}

/** Compares m × 10^scale (m ≥ 0, scale ≤ 0 or small) with an integer. */
function compareMagnitude(magnitude: bigint, scale: number, other: bigint): number {
  const [a, b] =
    scale >= 0
      ? [magnitude * 10n ** BigInt(scale), other]
      : [magnitude, other * 10n ** BigInt(-scale)];
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Quantity.RoundUp(scale): Go keeps the cached text when no rounding is needed. */
export function roundUpQuantity(q: Quantity, scale: number = MILLI): Quantity {
  if (q.scale >= scale) return q;
  const negative = q.mantissa < 0n;
  const [magnitude, newScale] = ceilToScale(negative ? -q.mantissa : q.mantissa, q.scale, scale);
  return { mantissa: negative ? -magnitude : magnitude, scale: newScale, format: q.format };
}

/** The string inside Quantity.MarshalJSON's quotes. */
export function formatQuantity(q: Quantity): string {
  if (q.cached !== undefined) return q.cached;
  if (q.mantissa === 0n) return '0';
  if (q.format === 'BinarySI') {
    const binary = formatBinary(q);
    if (binary !== undefined) return binary;
    return formatDecimal(q, 'DecimalSI');
  }
  return formatDecimal(q, q.format);
}

function formatDecimal(q: Quantity, format: QuantityFormat): string {
  let mantissa = q.mantissa;
  let exponent = q.scale;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  let suffix: string;
  if (format === 'DecimalExponent') suffix = exponent === 0 ? '' : `e${exponent}`;
  // Go looks the suffix up in a table and writes none when it is missing ("1000E" → "1").
  else suffix = Object.keys(DECIMAL_SUFFIXES).find((k) => DECIMAL_SUFFIXES[k] === exponent) ?? '';
  return `${mantissa}${suffix}`;
}

/** BinarySI form, or undefined when Go falls back to DecimalSI (|v| < 1024 or a fraction). */
function formatBinary(q: Quantity): string | undefined {
  const magnitude = q.mantissa < 0n ? -q.mantissa : q.mantissa;
  if (compareMagnitude(magnitude, q.scale, 1024n) < 0) return undefined;
  let value: bigint;
  if (q.scale >= 0) {
    value = q.mantissa * 10n ** BigInt(q.scale);
  } else {
    const divisor = 10n ** BigInt(-q.scale);
    if (q.mantissa % divisor !== 0n) return undefined;
    value = q.mantissa / divisor;
  }
  let times = 0;
  while (value % 1024n === 0n) {
    value /= 1024n;
    times++;
  }
  return `${value}${BINARY_NAMES[times] ?? ''}`;
}

/** Both mantissas at the smaller of the two scales, so that they compare and add exactly. */
export function aligned(a: Quantity, b: Quantity): [bigint, bigint] {
  const scale = Math.min(a.scale, b.scale);
  return [a.mantissa * 10n ** BigInt(a.scale - scale), b.mantissa * 10n ** BigInt(b.scale - scale)];
}

/** Quantity.Cmp: -1, 0 or 1, exact. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const [x, y] = aligned(a, b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Parse, then serialise as Go does (no rounding): how a quantity appears in Go's JSON. */
export function canonicalQuantity(input: string | number): string {
  return formatQuantity(parseQuantity(input));
}

/** What SetDefaults_ResourceList leaves: rounded up to milli, then serialised. */
export function defaultQuantity(input: string | number): string {
  return formatQuantity(roundUpQuantity(parseQuantity(input), MILLI));
}
