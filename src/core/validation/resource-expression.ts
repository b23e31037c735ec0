/**
 * The resourcesPolicy expression language (reference §1.10): numbers, percentages (`50%` = 0.5),
 * quantities (`50m`, `128Mi`), one variable (`cpu` or `memory`), `+ - * /`, unary minus,
 * parentheses and the two-argument functions max() and min(). Grammar and error cases follow
 * OpenKruise's pkg/util/calculator; this is a fresh recursive-descent implementation.
 */
import { parseQuantityValue } from './quantity-value.js';

/** A quantity carries a unit; a plain number (or percentage) is a scalar. */
export interface ExprValue {
  quantity: boolean;
  value: number;
}

export type ExprResult = { ok: true; value: ExprValue } | { ok: false; error: string };

type Token =
  | { kind: 'num'; text: string }
  | { kind: 'ident'; text: string }
  | { kind: 'op'; text: string }
  | { kind: 'end'; text: string };

class ExprError extends Error {}

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
    if (m === null) throw new ExprError(`unexpected character at position ${pos}`);
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'num', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'ident', text: m[2] });
    else tokens.push({ kind: 'op', text: m[3] ?? '' });
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

function literal(text: string): ExprValue {
  const unit = /[A-Za-z]+$/.exec(text)?.[0];
  if (unit === undefined || /^\d*\.?\d*[eE]\d*$/.test(text)) {
    const pct = text.endsWith('%');
    const n = Number(pct ? text.slice(0, -1) : text);
    if (!Number.isFinite(n)) throw new ExprError(`invalid number: ${text}`);
    return { quantity: false, value: pct ? n / 100 : n };
  }
  const q = parseQuantityValue(text);
  if (!QUANTITY_UNITS.has(unit) || q === undefined) {
    throw new ExprError(`invalid quantity: ${text}`);
  }
  return { quantity: true, value: q };
}

class Parser {
  private pos = 0;
  private readonly tokens: Token[];
  private readonly vars: Readonly<Record<string, ExprValue>>;

  constructor(tokens: Token[], vars: Readonly<Record<string, ExprValue>>) {
    this.tokens = tokens;
    this.vars = vars;
  }

  parse(): ExprValue {
    const v = this.expr();
    const t = this.peek();
    if (t.kind !== 'end') throw new ExprError(`syntax error: unexpected ${JSON.stringify(t.text)}`);
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
      throw new ExprError(
        `syntax error: expected ${JSON.stringify(text)}, got ${t.kind === 'end' ? 'end of input' : JSON.stringify(t.text)}`,
      );
    }
    this.pos++;
  }

  private expr(): ExprValue {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.take().text;
      const right = this.term();
      const quantity = left.quantity || right.quantity;
      left = { quantity, value: op === '+' ? left.value + right.value : left.value - right.value };
    }
    return left;
  }

  private term(): ExprValue {
    let left = this.factor();
    while (this.isOp('*') || this.isOp('/')) {
      const op = this.take().text;
      const right = this.factor();
      left = op === '*' ? multiply(left, right) : divide(left, right);
    }
    return left;
  }

  private factor(): ExprValue {
    const t = this.take();
    if (t.kind === 'num') return literal(t.text);
    if (t.kind === 'op' && t.text === '-') {
      const v = this.factor();
      return { quantity: v.quantity, value: -v.value };
    }
    if (t.kind === 'op' && t.text === '(') {
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (t.kind === 'ident') return this.isOp('(') ? this.call(t.text) : this.variable(t.text);
    throw new ExprError(
      `syntax error: unexpected ${t.kind === 'end' ? 'end of input' : JSON.stringify(t.text)}`,
    );
  }

  private variable(name: string): ExprValue {
    const v = this.vars[name.toLowerCase()];
    if (v === undefined) throw new ExprError(`unknown variable: ${name}`);
    return v;
  }

  private call(name: string): ExprValue {
    this.expect('(');
    const args = [this.expr()];
    while (this.isOp(',')) {
      this.pos++;
      args.push(this.expr());
    }
    this.expect(')');
    const fn = name.toLowerCase();
    if (fn !== 'max' && fn !== 'min') throw new ExprError(`unknown function: ${name}`);
    const [a, b] = args;
    if (args.length !== 2 || a === undefined || b === undefined) {
      throw new ExprError(`${fn} function requires exactly 2 arguments, got ${args.length}`);
    }
    const pick = fn === 'max' ? Math.max(a.value, b.value) : Math.min(a.value, b.value);
    return { quantity: a.quantity || b.quantity, value: pick };
  }
}

function multiply(a: ExprValue, b: ExprValue): ExprValue {
  if (a.quantity && b.quantity) throw new ExprError('multiplication of two quantities');
  return { quantity: a.quantity || b.quantity, value: a.value * b.value };
}

function divide(a: ExprValue, b: ExprValue): ExprValue {
  if (b.quantity) throw new ExprError('division by quantity');
  if (b.value === 0) throw new ExprError('division by zero');
  return { quantity: a.quantity, value: a.value / b.value };
}

/** Parses and evaluates; a negative result is an error, as upstream. */
export function evaluateResourceExpression(
  input: string,
  vars: Readonly<Record<string, ExprValue>>,
): ExprResult {
  try {
    if (input.trim() === '') throw new ExprError('empty expression');
    const value = new Parser(tokenize(input), vars).parse();
    if (value.value < 0) throw new ExprError(`calculation result is negative: ${value.value}`);
    return { ok: true, value };
  } catch (e) {
    /* c8 ignore next -- only ExprError is thrown above */
    if (!(e instanceof ExprError)) throw e;
    return { ok: false, error: e.message };
  }
}

/**
 * The validating webhook's check: parse with the variable bound to the number 1. Returns the
 * error detail (`invalid expression: …`) or undefined.
 */
export function checkResourceExpression(input: string, variable: string): string | undefined {
  const r = evaluateResourceExpression(input, { [variable]: { quantity: false, value: 1 } });
  return r.ok ? undefined : `invalid expression: ${r.error}`;
}
