/**
 * A FIFO limit on how many async jobs run at once: a job starts when one of `width` slots is free,
 * in the order the jobs were submitted, and frees its slot however it ends.
 */
export class Slots {
  readonly width: number;
  #running = 0;
  #waiting: (() => void)[] = [];

  constructor(width: number) {
    if (!Number.isInteger(width) || width < 1)
      throw new RangeError(`width must be a positive integer: ${width}`);
    this.width = width;
  }

  /** Jobs running now. */
  get running(): number {
    return this.#running;
  }

  /** Jobs submitted and not started yet. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(job: () => Promise<T> | T): Promise<T> {
    if (this.#running < this.width && this.#waiting.length === 0) this.#running++;
    // The slot is handed over by release(), so the count already includes this job when it wakes.
    else await new Promise<void>((start) => this.#waiting.push(start));
    try {
      return await job();
    } finally {
      this.#release();
    }
  }

  /**
   * Resolves once every job submitted before the call has ended: it takes every slot, each held
   * until all are taken (FIFO, so none is taken before the earlier jobs have left it).
   */
  async drain(): Promise<void> {
    let taken = 0;
    let allTaken!: () => void;
    const barrier = new Promise<void>((resolve) => (allTaken = resolve));
    await Promise.all(
      Array.from({ length: this.width }, () =>
        this.run(() => {
          if (++taken === this.width) allTaken();
          return barrier;
        }),
      ),
    );
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}
