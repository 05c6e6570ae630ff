import { inspect } from "node:util";
import { SandboxIacError } from "./errors";
import { resolveConfig, type ResolvedConfig } from "./config";

const KEY = "e2b_0123456789abcdef0123456789abcdef";
const quiet = (): void => undefined;

describe("resolveConfig()", () => {
  it("announces the local default once per process", () => {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const fresh = require("./config") as typeof import("./config");
      const lines: string[] = [];
      const first = fresh.resolveConfig({ env: {}, log: (l) => lines.push(l) });
      fresh.resolveConfig({ env: {}, log: (l) => lines.push(l) });
      expect(first.apiUrl).toBe("http://127.0.0.1:3000");
      expect(first.source.apiUrl).toBe("default");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("http://127.0.0.1:3000");
    });
  });

  it("prefers explicit options over environment variables", () => {
    const config = resolveConfig({
      apiKey: KEY,
      apiUrl: "http://10.0.0.1:4000/",
      env: { E2B_API_KEY: "e2b_ffff", E2B_API_URL: "http://other:1", E2B_DOMAIN: "example.com" },
      log: quiet,
    });
    expect(config.apiKey).toBe(KEY);
    expect(config.apiUrl).toBe("http://10.0.0.1:4000");
    expect(config.source).toEqual({
      apiKey: "option",
      apiUrl: "option",
      sandboxUrl: "unset",
      domain: "env",
    });
  });

  it("reads E2B_* environment variables when no option is given", () => {
    const config = resolveConfig({
      env: {
        E2B_API_KEY: KEY,
        E2B_API_URL: "http://127.0.0.1:3999",
        E2B_SANDBOX_URL: "http://127.0.0.1:3998",
      },
      log: quiet,
    });
    expect(config.apiKey).toBe(KEY);
    expect(config.apiUrl).toBe("http://127.0.0.1:3999");
    expect(config.sandboxUrl).toBe("http://127.0.0.1:3998");
    expect(config.source.apiKey).toBe("env");
  });

  it("derives https://api.<domain> and per-sandbox hosts from a domain", () => {
    const config = resolveConfig({ env: { E2B_DOMAIN: "example.com" }, log: quiet });
    expect(config.apiUrl).toBe("https://api.example.com");
    expect(config.source.apiUrl).toBe("domain");
    expect(config.sandboxBaseUrl("iabc123")).toEqual({
      url: "https://49983-iabc123.example.com",
      headers: {},
    });
    expect(config.sandboxBaseUrl("iabc123", 8080).url).toBe("https://8080-iabc123.example.com");
  });

  it("routes every sandbox through a shared sandbox URL by header", () => {
    const config = resolveConfig({
      sandboxUrl: "http://127.0.0.1:5000",
      domain: "example.com",
      env: {},
      log: quiet,
    });
    expect(config.sandboxBaseUrl("iabc")).toEqual({
      url: "http://127.0.0.1:5000",
      headers: { "E2b-Sandbox-Id": "iabc", "E2b-Sandbox-Port": "49983" },
    });
  });

  it("serves sandboxes at the API URL by header when neither domain nor sandbox URL is set", () => {
    const config = resolveConfig({ apiUrl: "http://127.0.0.1:3000", env: {}, log: quiet });
    expect(config.sandboxBaseUrl("iabc", 3001)).toEqual({
      url: "http://127.0.0.1:3000",
      headers: { "E2b-Sandbox-Id": "iabc", "E2b-Sandbox-Port": "3001" },
    });
  });

  it("treats an empty environment variable as unset", () => {
    const config = resolveConfig({
      apiUrl: "http://h:1",
      env: { E2B_API_KEY: "", E2B_DOMAIN: " " },
      log: quiet,
    });
    expect(config.apiKey).toBeUndefined();
    expect(config.domain).toBeUndefined();
  });

  it("never shows the API key through JSON.stringify, util.inspect or Object.keys", () => {
    const config: ResolvedConfig = resolveConfig({
      apiKey: KEY,
      apiUrl: "http://h:1",
      env: {},
      log: quiet,
    });
    expect(JSON.stringify(config)).not.toContain(KEY);
    expect(JSON.stringify(config)).toContain("[redacted]");
    expect(inspect(config, { showHidden: true, depth: 10 })).not.toContain(KEY);
    expect(Object.keys(config)).not.toContain("apiKey");
    expect(config.apiKey).toBe(KEY);
  });

  it("fails when E2B_API_URL is not a URL, naming the variable, the value and the allowed form", () => {
    let caught: unknown;
    try {
      resolveConfig({ env: { E2B_API_URL: "localhost:3000/x?y" }, log: quiet });
    } catch (error) {
      caught = error;
    }
    expect(SandboxIacError.hasCode(caught, "invalid_argument")).toBe(true);
    const err = caught as SandboxIacError;
    expect(err.field).toBe("E2B_API_URL");
    expect(err.message).toContain('"localhost:3000/x?y"');
    expect(err.message).toContain("http(s) URL");
  });

  it("fails when the apiUrl option uses another scheme", () => {
    expect(() => resolveConfig({ apiUrl: "ftp://h", env: {}, log: quiet })).toThrow(
      /apiUrl must be an absolute http\(s\) URL/,
    );
  });

  it("fails when the domain carries a scheme", () => {
    expect(() => resolveConfig({ domain: "https://example.com", env: {}, log: quiet })).toThrow(
      /domain must be a host name/,
    );
  });

  it("fails when a sandbox ID cannot be part of a host name", () => {
    const config = resolveConfig({ domain: "example.com", env: {}, log: quiet });
    expect(() => config.sandboxBaseUrl("Bad_ID")).toThrow(
      /sandboxID must be a sandbox ID of lower-case letters and digits/,
    );
  });
});
