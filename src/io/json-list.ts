/**
 * A JSON object read from its bytes with its `items` array taken one item at a time, so that a
 * `kubectl get pods -o json` of 100,000 pods (~380 MB) never exists as one string nor as one tree
 * of full objects: each item is parsed alone (`JSON.parse` of its own bytes) and handed on, and
 * the reader may keep only a reduced copy of it (issue 22, `sidecarset plan` at fleet size). The
 * bytes may come a chunk at a time: only those from the current item on are kept.
 *
 * The scan only finds where values end (it follows strings, escapes and nesting); `JSON.parse`
 * of each value does the checking. Anything the scan does not expect gives `undefined`, and the
 * caller parses the whole text as before, which also reports errors as before.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

export interface ScannedObject {
  /** The object's members, without `items` when it was scanned item by item. */
  fields: Record<string, unknown>;
  /** Whether `items` was an array, given to `each` item by item rather than kept in fields. */
  listed: boolean;
}

/**
 * The next bytes of the input, or undefined at its end. The scan copies them before it asks again,
 * so they may be one buffer filled anew each time.
 */
export type MoreBytes = () => Uint8Array | undefined;

/** Thrown inside the scan for input it does not follow; never leaves this module. */
class NotScannable extends Error {}

/**
 * Scans `bytes`, then those `more` gives (UTF-8), holding one JSON object. When its `items`
 * member is an array, each item goes to `each` in order, unless a `kind` member that does not end
 * in "List" came before it.
 * Errors thrown by `each` propagate; input that is not one well-formed JSON object gives
 * `undefined` (after some items may have gone to `each`).
 */
export function scanJsonObject(
  bytes: Buffer,
  each: (item: unknown, index: number) => void,
  more: MoreBytes = () => undefined,
): ScannedObject | undefined {
  try {
    return new Scanner(bytes, more).object(each);
  } catch (err) {
    if (err instanceof NotScannable) return undefined;
    throw err;
  }
}

/**
 * Positions index `bytes`, which only grows while a value is scanned (more bytes are appended);
 * the bytes before an item are dropped when the item starts (`forget`).
 */
class Scanner {
  private pos = 0;
  private bytes: Buffer;
  private readonly next: MoreBytes;

  constructor(bytes: Buffer, more: MoreBytes) {
    this.bytes = bytes;
    this.next = more;
  }

  /** Appends the input's next bytes; false at its end. */
  private more(): boolean {
    const chunk = this.next();
    if (chunk === undefined || chunk.length === 0) return false;
    this.bytes = Buffer.concat([this.bytes, chunk]);
    return true;
  }

  /** Drops the bytes before the current position. */
  private forget(): void {
    this.bytes = this.bytes.subarray(this.pos);
    this.pos = 0;
  }

  object(each: (item: unknown, index: number) => void): ScannedObject {
    // A Map, then fromEntries: a "__proto__" key becomes a member, as with JSON.parse.
    const fields = new Map<string, unknown>();
    let listed = false;
    this.expect(OPEN_OBJECT);
    if (this.peek() !== CLOSE_OBJECT) {
      for (;;) {
        const key = this.key();
        if (fields.has(key) || (key === 'items' && listed)) throw new NotScannable();
        const kind = fields.get('kind');
        const inList = typeof kind !== 'string' || kind.endsWith('List');
        if (key === 'items' && inList && this.peek() === OPEN_ARRAY) {
          this.items(each);
          listed = true;
        } else {
          fields.set(key, this.value());
        }
        if (this.peek() === CLOSE_OBJECT) break;
        this.expect(COMMA);
      }
    }
    this.pos++;
    if (this.peek() !== undefined) throw new NotScannable();
    return { fields: Object.fromEntries(fields), listed };
  }

  private items(each: (item: unknown, index: number) => void): void {
    this.expect(OPEN_ARRAY);
    if (this.peek() === CLOSE_ARRAY) {
      this.pos++;
      return;
    }
    for (let index = 0; ; index++) {
      this.peek();
      this.forget();
      each(this.value(), index);
      if (this.peek() === CLOSE_ARRAY) {
        this.pos++;
        return;
      }
      this.expect(COMMA);
    }
  }

  /** A member's key and the colon after it. */
  private key(): string {
    if (this.peek() !== QUOTE) throw new NotScannable();
    const key = this.parse(this.pos, this.stringEnd(this.pos));
    this.expect(COLON);
    if (typeof key !== 'string') throw new NotScannable();
    return key;
  }

  /** The value starting at the current position, parsed on its own. */
  private value(): unknown {
    this.peek();
    const start = this.pos;
    return this.parse(start, this.valueEnd(start));
  }

  private parse(start: number, end: number): unknown {
    this.pos = end;
    try {
      return JSON.parse(this.bytes.toString('utf8', start, end)) as unknown;
    } catch {
      throw new NotScannable();
    }
  }

  private valueEnd(start: number): number {
    const first = this.bytes[start];
    if (first === QUOTE) return this.stringEnd(start);
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) return this.nestedEnd(start);
    let i = start;
    for (;;) {
      while (i < this.bytes.length && !isDelimiter(this.bytes[i] ?? 0)) i++;
      if (i < this.bytes.length || !this.more()) return i;
    }
  }

  /** After the bracket that closes the one at `start`; brackets in strings do not count. */
  private nestedEnd(start: number): number {
    let bytes = this.bytes;
    let depth = 0;
    let i = start;
    for (;;) {
      if (i === bytes.length) {
        if (!this.more()) throw new NotScannable();
        bytes = this.bytes;
      }
      const b = bytes[i];
      if (b === QUOTE) {
        i = this.stringEnd(i);
        bytes = this.bytes;
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if ((b === CLOSE_OBJECT || b === CLOSE_ARRAY) && --depth === 0) return i + 1;
      i++;
    }
  }

  /** After the quote that closes the string opening at `start`. */
  private stringEnd(start: number): number {
    let from = start + 1;
    for (;;) {
      const bytes = this.bytes;
      const quote = bytes.indexOf(QUOTE, from);
      if (quote < 0) {
        from = bytes.length;
        if (!this.more()) throw new NotScannable();
        continue;
      }
      let backslashes = 0;
      while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return quote + 1;
      from = quote + 1;
    }
  }

  /** The next byte that is not white space, left at the current position. */
  private peek(): number | undefined {
    for (;;) {
      while (isSpace(this.bytes[this.pos] ?? 0)) this.pos++;
      if (this.pos < this.bytes.length || !this.more()) return this.bytes[this.pos];
    }
  }

  private expect(byte: number): void {
    if (this.peek() !== byte) throw new NotScannable();
    this.pos++;
  }
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function isDelimiter(b: number): boolean {
  return b === COMMA || b === CLOSE_OBJECT || b === CLOSE_ARRAY || isSpace(b);
}
