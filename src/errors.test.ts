import { forgetSecret, redact, registerSecret, registerSecretsIn, SandboxIacError } from "./errors";

describe("SandboxIacError.from()", () => {
  const context = { operation: "templates.saveCatalog", resourceId: "t1" };

  it("returns one of ours as it is", () => {
    const ours = new SandboxIacError("not_found", "gone", { operation: "x" });
    expect(SandboxIacError.from(ours, context)).toBe(ours);
  });

  it("wraps any Error as internal, keeping it as the cause and its message as the reason", () => {
    const cause = Object.assign(new Error("EACCES: permission denied, open '/x'"), {
      code: "EACCES",
    });
    const err = SandboxIacError.from(cause, context);
    expect(err).toMatchObject({
      code: "internal",
      operation: "templates.saveCatalog",
      resourceId: "t1",
      reason: "EACCES: permission denied, open '/x'",
      message: "templates.saveCatalog (t1) failed: EACCES: permission denied, open '/x'",
      cause,
    });
  });

  it("takes the code and status the context gives", () => {
    const err = SandboxIacError.from(new Error("bad"), {
      ...context,
      code: "invalid_argument",
      status: 413,
    });
    expect(err).toMatchObject({ code: "invalid_argument", status: 413 });
  });

  it("makes an abort canceled and a timeout timeout, even when they are not Errors", () => {
    const abort = { name: "AbortError", message: "This operation was aborted" };
    expect(SandboxIacError.from(abort, context).code).toBe("canceled");
    expect(SandboxIacError.from(new DOMException("timed out", "TimeoutError"), context).code).toBe(
      "timeout",
    );
  });

  it("renders a thrown value that is not an Error, without secrets", () => {
    expect(SandboxIacError.from("plain text", context).reason).toBe("plain text");
    expect(SandboxIacError.from(42, context).reason).toBe("42");
    expect(SandboxIacError.from(undefined, context).reason).toBe("nothing");
    const key = `e2b_${"a".repeat(40)}`;
    expect(SandboxIacError.from(new Error(`bad key ${key}`), context).message).not.toContain(key);
  });
});

describe("redact()", () => {
  const sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

  it("leaves hashes and ids: a 64-hex string is not a secret by its shape", () => {
    expect(redact(`${sha}  -`)).toBe(`${sha}  -`);
    expect(redact("sandbox i3f9c2a7b9d1e4f60 build 0c4b7c6e")).toBe(
      "sandbox i3f9c2a7b9d1e4f60 build 0c4b7c6e",
    );
  });

  it("redacts API keys by their shape, and values registered as secret wherever they appear", () => {
    expect(redact("key e2b_0123456789abcdef01234567")).toBe("key [redacted]");
    const token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    expect(redact(`token=${token}`)).toBe(`token=${token}`);
    registerSecret(token);
    registerSecretsIn({ envs: { PASSWORD: "hunter2-but-longer" } });
    expect(redact(`token=${token} pw=hunter2-but-longer ${sha}`)).toBe(
      `token=[redacted] pw=[redacted] ${sha}`,
    );
  });

  it("redacts each of many registered secrets, the longest where two start alike, and nothing else", () => {
    // As a long-lived service holds them: a token per sandbox it ever created.
    const tokens = Array.from({ length: 20_000 }, (_, i) => `tok-${String(i).padStart(6, "0")}-x`);
    tokens.forEach((t) => registerSecret(t));
    registerSecret("tok-000007-x-and-more");
    expect(redact(`a tok-019999-x b tok-000007-x-and-more c tok-000007-x tok-0 ${sha}`)).toBe(
      `a [redacted] b [redacted] c [redacted] tok-0 ${sha}`,
    );
    expect(redact("tok-000007-xtok-000008-x")).toBe("[redacted][redacted]");
    expect(redact("no secret here at all")).toBe("no secret here at all");
  });

  it("stops redacting a forgotten secret and keeps redacting the others that start alike", () => {
    registerSecret("gone-token-0123456789");
    registerSecret("gone-token-0123456789-kept");
    registerSecret("gone-token-kept-too");
    forgetSecret("gone-token-0123456789");
    expect(
      redact("a gone-token-0123456789 b gone-token-0123456789-kept c gone-token-kept-too"),
    ).toBe("a gone-token-0123456789 b [redacted] c [redacted]");
    forgetSecret("gone-token-0123456789-kept");
    forgetSecret("gone-token-kept-too");
    forgetSecret("never-registered");
    expect(redact("gone-token-kept-too")).toBe("gone-token-kept-too");
  });

  it("ignores values too short to be a secret (redacting them would blank ordinary words)", () => {
    registerSecret("yes");
    expect(redact("yes it is")).toBe("yes it is");
  });
});
