/**
 * The resourcesPolicy expression language (OpenKruise pkg/webhook/pod/mutating/sidecarset_resources.go): numbers, percentages (`50%` = 0.5),
 * quantities (`50m`, `128Mi`), one variable (`cpu` or `memory`), `+ - * /`, unary minus,
 * parentheses and the two-argument functions max() and min(). Grammar and error cases follow
 * OpenKruise's pkg/util/calculator; this is a fresh recursive-descent implementation.
 *
 * The parser is generic over an ExprAlgebra: validation evaluates with plain floats (below), the
 * injection evaluates with Go's resource.Quantity arithmetic (inject/resources-policy.ts).
 */
import { parseQuantityValue } from '../encoding/quantity-value.js';

/** A quantity carries a unit; a plain number (or percentage) is a scalar. */
export interface ExprValue {
  quantity: boolean;
  value: number;
}

export type ExprResult = { ok: true; value: ExprValue } | { ok: false; error: string };

/** The operations an evaluation needs; each may throw ResourceExpressionError. */
export interface ExprAlgebra<V> {
  /** A plain number; a percentage arrives already divided by 100. */
  number(n: number): V;
  /** A quantity literal whose unit is one of the expression language's (m, k, Ki, …). */
  quantity(text: string): V;
  negate(v: V): V;
  add(a: V, b: V): V;
  subtract(a: V, b: V): V;
  multiply(a: V, b: V): V;
  divide(a: V, b: V): V;
  max(a: V, b: V): V;
  min(a: V, b: V): V;
  /** The text of a negative result (for the error), or undefined when it is not negative. */
  negative(v: V): string | undefined;
}

export type EvaluationResult<V> = { ok: true; value: V } | { ok: false; error: string };

type Token =
  | { kind: 'num'; text: string }
  | { kind: 'ident'; text: string }
  | { kind: 'op'; text: string }
  | { kind: 'end'; text: string };

/** An expression that does not parse or evaluate. */
export class ResourceExpressionError extends Error {}

const QUANTITY_UNITS = new Set(['m', 'k', 'M', 'G', 'T', 'P', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  const re =
    /\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?%?[A-Za-z]*|\.\d+%?[A-Za-z]*)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/(),]))/y;
  let pos = 0;
  while (pos < input.length) {
    if (/^\s*$/.test(input.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(input);
    if (m === null) throw new ResourceExpressionError(`unexpected character at position ${pos}`);
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'num', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'ident', text: m[2] });
    else tokens.push({ kind: 'op', text: m[3] ?? '' });
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

function literal<V>(text: string, algebra: ExprAlgebra<V>): V {
  const unit = /[A-Za-z]+$/.exec(text)?.[0];
  if (unit === undefined || /^\d*\.?\d*[eE]\d*$/.test(text)) {
    const pct = text.endsWith('%');
    const n = Number(pct ? text.slice(0, -1) : text);
    if (!Number.isFinite(n)) throw new ResourceExpressionError(`invalid number: ${text}`);
    return algebra.number(pct ? n / 100 : n);
  }
  if (!QUANTITY_UNITS.has(unit)) throw new ResourceExpressionError(`invalid quantity: ${text}`);
  return algebra.quantity(text);
}

class Parser<V> {
  private pos = 0;
  private readonly tokens: Token[];
  private readonly algebra: ExprAlgebra<V>;
  private readonly vars: Readonly<Record<string, V>>;

  constructor(tokens: Token[], algebra: ExprAlgebra<V>, vars: Readonly<Record<string, V>>) {
    this.tokens = tokens;
    this.algebra = algebra;
    this.vars = vars;
  }

  parse(): V {
    const v = this.expr();
    const t = this.peek();
    if (t.kind !== 'end')
      throw new ResourceExpressionError(`syntax error: unexpected ${JSON.stringify(t.text)}`);
    return v;
  }

  private peek(): Token {
    return this.tokens[this.pos] ?? { kind: 'end', text: '' };
  }

  private take(): Token {
    const t = this.peek();
    this.pos++;
    return t;
  }

  private isOp(text: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === text;
  }

  private expect(text: string): void {
    if (!this.isOp(text)) {
      const t = this.peek();
      throw new ResourceExpressionError(
        `syntax error: expected ${JSON.stringify(text)}, got ${t.kind === 'end' ? 'end of input' : JSON.stringify(t.text)}`,
      );
    }
    this.pos++;
  }

  private expr(): V {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.take().text;
      const right = this.term();
      left = op === '+' ? this.algebra.add(left, right) : this.algebra.subtract(left, right);
    }
    return left;
  }

  private term(): V {
    let left = this.factor();
    while (this.isOp('*') || this.isOp('/')) {
      const op = this.take().text;
      const right = this.factor();
      left = op === '*' ? this.algebra.multiply(left, right) : this.algebra.divide(left, right);
    }
    return left;
  }

  private factor(): V {
    const t = this.take();
    if (t.kind === 'num') return literal(t.text, this.algebra);
    if (t.kind === 'op' && t.text === '-') return this.algebra.negate(this.factor());
    if (t.kind === 'op' && t.text === '(') {
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (t.kind === 'ident') return this.isOp('(') ? this.call(t.text) : this.variable(t.text);
    throw new ResourceExpressionError(
      `syntax error: unexpected ${t.kind === 'end' ? 'end of input' : JSON.stringify(t.text)}`,
    );
  }

  private variable(name: string): V {
    const v = this.vars[name.toLowerCase()];
    if (v === undefined) throw new ResourceExpressionError(`unknown variable: ${name}`);
    return v;
  }

  private call(name: string): V {
    this.expect('(');
    const args = [this.expr()];
    while (this.isOp(',')) {
      this.pos++;
      args.push(this.expr());
    }
    this.expect(')');
    const fn = name.toLowerCase();
    if (fn !== 'max' && fn !== 'min')
      throw new ResourceExpressionError(`unknown function: ${name}`);
    const [a, b] = args;
    if (args.length !== 2 || a === undefined || b === undefined) {
      throw new ResourceExpressionError(
        `${fn} function requires exactly 2 arguments, got ${args.length}`,
      );
    }
    return fn === 'max' ? this.algebra.max(a, b) : this.algebra.min(a, b);
  }
}

/** Plain floating-point evaluation: precise enough for validation, not for written results. */
const FLOAT_ALGEBRA: ExprAlgebra<ExprValue> = {
  number: (value) => ({ quantity: false, value }),
  quantity(text) {
    const value = parseQuantityValue(text);
    if (value === undefined) throw new ResourceExpressionError(`invalid quantity: ${text}`);
    return { quantity: true, value };
  },
  negate: (v) => ({ quantity: v.quantity, value: -v.value }),
  add: (a, b) => ({ quantity: a.quantity || b.quantity, value: a.value + b.value }),
  subtract: (a, b) => ({ quantity: a.quantity || b.quantity, value: a.value - b.value }),
  multiply(a, b) {
    if (a.quantity && b.quantity)
      throw new ResourceExpressionError('multiplication of two quantities');
    return { quantity: a.quantity || b.quantity, value: a.value * b.value };
  },
  divide(a, b) {
    if (b.quantity) throw new ResourceExpressionError('division by quantity');
    if (b.value === 0) throw new ResourceExpressionError('division by zero');
    return { quantity: a.quantity, value: a.value / b.value };
  },
  max: (a, b) => ({ quantity: a.quantity || b.quantity, value: Math.max(a.value, b.value) }),
  min: (a, b) => ({ quantity: a.quantity || b.quantity, value: Math.min(a.value, b.value) }),
  negative: (v) => (v.value < 0 ? String(v.value) : undefined),
};

/** Parses and evaluates with the given algebra; a negative result is an error, as upstream. */
export function evaluateExpression<V>(
  input: string,
  algebra: ExprAlgebra<V>,
  vars: Readonly<Record<string, V>>,
): EvaluationResult<V> {
  try {
    if (input.trim() === '') throw new ResourceExpressionError('empty expression');
    const value = new Parser(tokenize(input), algebra, vars).parse();
    const negative = algebra.negative(value);
    if (negative !== undefined)
      throw new ResourceExpressionError(`calculation result is negative: ${negative}`);
    return { ok: true, value };
  } catch (e) {
    /* c8 ignore next -- an algebra throws only ResourceExpressionError */
    if (!(e instanceof ResourceExpressionError)) throw e;
    return { ok: false, error: e.message };
  }
}

/** Parses and evaluates with floats; a negative result is an error, as upstream. */
export function evaluateResourceExpression(
  input: string,
  vars: Readonly<Record<string, ExprValue>>,
): ExprResult {
  return evaluateExpression(input, FLOAT_ALGEBRA, vars);
}

/**
 * The validating webhook's check: parse with the variable bound to the number 1. Returns the
 * error detail (`invalid expression: …`) or undefined; an empty expression sets nothing and is
 * valid (OpenKruise validateResourceExpression).
 */
export function checkResourceExpression(input: string, variable: string): string | undefined {
  if (input === '') return undefined;
  const r = evaluateResourceExpression(input, { [variable]: { quantity: false, value: 1 } });
  return r.ok ? undefined : `invalid expression: ${r.error}`;
}
