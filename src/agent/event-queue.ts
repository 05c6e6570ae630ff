/**
 * An unbounded single-consumer async queue feeding one server stream, with an
 * optional idle keepalive. Producers never block: stream backpressure is left
 * to the HTTP layer, as envd does.
 *
 * @module
 */

/** One stream's queue of outgoing messages. */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private keepaliveMs = 0;
  private makeKeepalive: (() => T) | undefined;

  /** Queues a message; ignored after {@link end}. */
  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.armKeepalive();
    this.notify();
  }

  /** Ends the stream once the queued messages are consumed. */
  end(): void {
    this.closed = true;
    this.clearKeepalive();
    this.notify();
  }

  /** Ends the stream with `error` once the queued messages are consumed. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    this.end();
  }

  /** True once {@link end} or {@link fail} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Sends `make()` whenever nothing was queued for `intervalMs`.
   * Every pushed message restarts the interval.
   */
  keepalive(intervalMs: number, make: () => T): void {
    this.keepaliveMs = intervalMs;
    this.makeKeepalive = make;
    this.armKeepalive();
  }

  private armKeepalive(): void {
    this.clearKeepalive();
    if (this.closed || !this.makeKeepalive || this.keepaliveMs <= 0) return;
    this.keepaliveTimer = setTimeout(() => this.push(this.makeKeepalive!()), this.keepaliveMs);
  }

  private clearKeepalive(): void {
    if (this.keepaliveTimer) clearTimeout(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        const item = this.items.shift();
        if (item !== undefined) {
          yield item;
          continue;
        }
        if (this.closed) {
          if (this.failure) throw this.failure.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.closed = true;
      this.clearKeepalive();
    }
  }
}

/**
 * The keepalive interval a stream asked for in `Keepalive-Ping-Interval`
 * (seconds), in milliseconds.
 *
 * @default 90 s when the header is missing or not a positive integer
 */
export function keepaliveIntervalMs(headerValue: string | null, defaultSeconds: number): number {
  const n = headerValue === null ? NaN : Number.parseInt(headerValue, 10);
  return (Number.isFinite(n) && n > 0 ? n : defaultSeconds) * 1000;
}
