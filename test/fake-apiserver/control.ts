import type { AdmissionHook } from './admission.js';
import { injectedFault } from './errors.js';
import type { ApiError } from './errors.js';
import type { JsonValue } from './json.js';
import type { ResourceDef } from './resources.js';
import type { Verb } from './router.js';
import { Signal, waitUntil } from './wait.js';
import type { WaitOptions } from './wait.js';
import type { WatchEvent } from './watch.js';

/** A request as the server understood it; what fault predicates and the request log see. */
export interface RequestInfo {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  readonly body: JsonValue | undefined;
  readonly verb: Verb | undefined;
  readonly group: string | undefined;
  readonly resource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

export interface RequestRecord extends RequestInfo {
  readonly status: number;
  /** True when an injected fault produced the status. */
  readonly injected: boolean;
}

export interface FaultRule {
  readonly match: (request: RequestInfo) => boolean;
  readonly status: number;
  /** How many matching requests fail; default 1. */
  readonly times?: number;
  readonly message?: string;
  /**
   * 'before' (default): the request fails without effect. 'after': it takes effect, then the
   * answer is replaced by the error, like a reply lost on the way back.
   */
  readonly phase?: 'before' | 'after';
}

export interface Fault {
  /** Matching requests failed so far. */
  hits(): number;
  remaining(): number;
  cancel(): void;
}

export interface WatchInfo {
  readonly id: number;
  readonly path: string;
  readonly resource: ResourceDef;
  readonly namespace: string;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  readonly resourceVersion: string | undefined;
}

/** What the server registers for each open watch stream. */
export interface WatchHandle {
  readonly info: WatchInfo;
  send(event: WatchEvent): void;
  sendBookmark(): void;
  /** Ends the stream cleanly: the client sees the watch finish and normally re-watches. */
  end(): void;
  /** Destroys the connection: the client sees a network error. */
  destroy(): void;
}

/** A warm-up started by `ApiControl.warmUp`. */
export interface WarmUp {
  /** The server is ready: /readyz answers ok and requests are served again. */
  end(): void;
}

interface ActiveFault {
  readonly rule: FaultRule;
  left: number;
  hit: number;
}

/** Test hooks on the HTTP side of the fake: faults, the request log and open watches. */
export class ApiControl {
  private readonly faults: ActiveFault[] = [];
  private readonly admission: AdmissionHook[] = [];
  private readonly log: RequestRecord[] = [];
  private readonly openWatches = new Map<number, WatchHandle>();
  private readonly requestSignal = new Signal<RequestRecord>();
  private readonly watchSignal = new Signal<undefined>();
  private warmingUp: { status: number } | undefined;

  /** Makes the next `times` requests matching `rule.match` fail with `rule.status`. */
  failNext(rule: FaultRule): Fault {
    const active: ActiveFault = { rule, left: rule.times ?? 1, hit: 0 };
    this.faults.push(active);
    return {
      hits: () => active.hit,
      remaining: () => active.left,
      cancel: () => {
        active.left = 0;
      },
    };
  }

  /**
   * Acts as a restarted API server before it is ready: /readyz answers 500 and every API request
   * `status` (default 403, what RBAC answers before its caches have filled) until end().
   */
  warmUp(options: { status?: number } = {}): WarmUp {
    const current = { status: options.status ?? 403 };
    this.warmingUp = current;
    return {
      end: () => {
        if (this.warmingUp === current) this.warmingUp = undefined;
      },
    };
  }

  /** @internal server side: the error for an API request during a warm-up, if one runs. */
  warmUpError(): ApiError | undefined {
    if (this.warmingUp === undefined) return undefined;
    return injectedFault(this.warmingUp.status, 'the server is starting (fake warm-up)');
  }

  /** @internal server side: /readyz's answer. */
  ready(): boolean {
    return this.warmingUp === undefined;
  }

  /** The request log, oldest first. Bodies are as received. */
  requests(match?: (r: RequestRecord) => boolean): readonly RequestRecord[] {
    return match === undefined ? [...this.log] : this.log.filter(match);
  }

  clearRequests(): void {
    this.log.length = 0;
  }

  onRequest(listener: (record: RequestRecord) => void): () => void {
    return this.requestSignal.subscribe(listener);
  }

  /** Resolves with the first logged request (past or future) that matches. */
  waitForRequest(
    match: (r: RequestRecord) => boolean,
    options: WaitOptions = {},
  ): Promise<RequestRecord> {
    return waitUntil(
      (wake) => this.requestSignal.subscribe(wake),
      () => this.log.find(match),
      {
        what: 'a matching request',
        ...options,
      },
    );
  }

  watches(match?: (w: WatchInfo) => boolean): readonly WatchInfo[] {
    const all = [...this.openWatches.values()].map((w) => w.info);
    return match === undefined ? all : all.filter(match);
  }

  /** Resolves once a matching watch stream is open (for example after an informer (re)connects). */
  waitForWatch(
    match: (w: WatchInfo) => boolean = () => true,
    options: WaitOptions = {},
  ): Promise<WatchInfo> {
    return waitUntil(
      (wake) => this.watchSignal.subscribe(wake),
      () => this.watches(match)[0],
      { what: 'a matching watch', ...options },
    );
  }

  /** Resolves once the open watch streams satisfy `check` (for example: none is left). */
  waitForWatches(
    check: (open: readonly WatchInfo[]) => boolean,
    options: WaitOptions = {},
  ): Promise<true> {
    return waitUntil(
      (wake) => this.watchSignal.subscribe(wake),
      () => (check(this.watches()) ? true : undefined),
      { what: 'the open watches to match', ...options },
    );
  }

  /** Closes the matching watch streams; `abrupt` destroys the sockets instead. Returns how many. */
  closeWatches(
    match: (w: WatchInfo) => boolean = () => true,
    options: { abrupt?: boolean } = {},
  ): number {
    const chosen = [...this.openWatches.values()].filter((w) => match(w.info));
    for (const w of chosen) {
      if (options.abrupt === true) w.destroy();
      else w.end();
    }
    return chosen.length;
  }

  /** Sends a BOOKMARK now on every open watch that asked for bookmarks. */
  sendBookmarks(): void {
    for (const w of this.openWatches.values()) w.sendBookmark();
  }

  /** Adds a mutating admission hook (see admissionReviewHook); returns its remover. */
  addAdmissionHook(hook: AdmissionHook): () => void {
    this.admission.push(hook);
    return () => {
      const index = this.admission.indexOf(hook);
      if (index >= 0) this.admission.splice(index, 1);
    };
  }

  /** @internal server side */
  admissionHooks(): readonly AdmissionHook[] {
    return [...this.admission];
  }

  /** @internal server side */
  takeFault(request: RequestInfo, phase: 'before' | 'after'): ApiError | undefined {
    const found = this.faults.find(
      (f) => f.left > 0 && (f.rule.phase ?? 'before') === phase && f.rule.match(request),
    );
    if (found === undefined) return undefined;
    found.left--;
    found.hit++;
    return injectedFault(found.rule.status, found.rule.message);
  }

  /** @internal server side */
  record(record: RequestRecord): void {
    this.log.push(record);
    this.requestSignal.emit(record);
  }

  /** @internal server side */
  addWatch(handle: WatchHandle): void {
    this.openWatches.set(handle.info.id, handle);
    this.watchSignal.emit(undefined);
  }

  /** @internal server side */
  removeWatch(id: number): void {
    this.openWatches.delete(id);
    this.watchSignal.emit(undefined);
  }
}
