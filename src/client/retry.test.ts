import {
  classifyError,
  classifyResponse,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
} from "./retry";

describe("parseRetryAfter()", () => {
  it("reads delta seconds", () => {
    expect(parseRetryAfter("3")).toBe(3000);
  });

  it("reads an HTTP date relative to now", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:28:05 GMT", now)).toBe(5000);
  });

  it("ignores a missing or unparseable value", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});

describe("retryDelayMs()", () => {
  it("doubles the backoff ceiling per attempt and jitters below it", () => {
    const policy = { baseDelayMs: 100, random: () => 0.5 };
    expect([1, 2, 3].map((n) => retryDelayMs(n, policy))).toEqual([50, 100, 200]);
  });

  it("honours the server's wait but caps it at maxDelayMs", () => {
    expect(retryDelayMs(1, {}, 2000)).toBe(2000);
    expect(retryDelayMs(1, { maxDelayMs: 500 }, 2000)).toBe(500);
  });
});

describe("classifyResponse() and classifyError()", () => {
  it("retries 429, 502, 503 and 504 only", () => {
    const decide = (status: number) => classifyResponse(new Response(null, { status })).retry;
    expect([429, 502, 503, 504].map(decide)).toEqual([true, true, true, true]);
    expect([200, 400, 401, 404, 409, 500].map(decide)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("retries connection failures but not aborts or other errors", () => {
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("x"), { code: "ECONNREFUSED" }),
    });
    expect(classifyError(refused)).toEqual({ retry: true, reason: "ECONNREFUSED" });
    expect(classifyError(new DOMException("aborted", "AbortError")).retry).toBe(false);
    expect(classifyError(new Error("boom")).retry).toBe(false);
  });
});

describe("withRetries()", () => {
  const retryAll = () => ({ retry: true as const, reason: "test" });

  it("stops after the bounded number of retries and returns the last outcome", async () => {
    let attempts = 0;
    const result = await withRetries(async () => ++attempts, retryAll, {
      idempotent: true,
      retries: 2,
      baseDelayMs: 1,
    });
    expect(attempts).toBe(3);
    expect(result).toBe(3);
  });

  it("never repeats a call that is not idempotent", async () => {
    let attempts = 0;
    await expect(
      withRetries(
        async () => {
          attempts++;
          throw new Error("down");
        },
        retryAll,
        { idempotent: false, retries: 3, baseDelayMs: 1 },
      ),
    ).rejects.toThrow("down");
    expect(attempts).toBe(1);
  });

  it("fails when the signal aborts during the wait, without another attempt", async () => {
    const controller = new AbortController();
    let attempts = 0;
    const run = withRetries(async () => ++attempts, retryAll, {
      idempotent: true,
      signal: controller.signal,
      retries: 3,
      maxDelayMs: 60_000,
      onRetry: () => controller.abort(new Error("stop")),
      random: () => 0.999,
      baseDelayMs: 60_000,
    });
    await expect(run).rejects.toThrow("stop");
    expect(attempts).toBe(1);
  });
});
