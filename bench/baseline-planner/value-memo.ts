/**
 * Answers remembered per distinct annotation value, for as long as that pays: when most lookups
 * miss (a fleet whose pods each carry their own value, e.g. a per-pod timestamp), keeping a map of
 * every value costs more than computing each answer again, so the memo turns itself off. The
 * answers never change (they depend on the value alone), only the time they take.
 */
export class ValueMemo<T> {
  private readonly answers = new Map<string, T>();
  private lookups = 0;
  private hits = 0;
  private on = true;

  /** Lookups after which the hit rate decides whether the memo stays on. */
  static readonly TRIAL = 1024;

  get(value: string): T | undefined {
    if (!this.on) return undefined;
    this.lookups++;
    const answer = this.answers.get(value);
    if (answer !== undefined) this.hits++;
    else if (this.lookups >= ValueMemo.TRIAL && this.hits * 2 < this.lookups) this.turnOff();
    return answer;
  }

  set(value: string, answer: T): void {
    if (this.on) this.answers.set(value, answer);
  }

  /** Whether answers are still remembered (for tests). */
  get remembering(): boolean {
    return this.on;
  }

  private turnOff(): void {
    this.on = false;
    this.answers.clear();
  }
}
