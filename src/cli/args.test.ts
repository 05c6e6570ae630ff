import { SandboxIacError } from "../errors";
import { parseArgs, SERVE_USAGE, STATUS_USAGE, TERRAFORM_USAGE, USAGE } from "./args";
import { defaultPluginDir } from "./terraform-args";

/** The `invalid_argument` error `argv` is refused with. */
function refusal(argv: string[]): SandboxIacError {
  try {
    parseArgs(argv);
  } catch (err) {
    if (SandboxIacError.hasCode(err, "invalid_argument")) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(argv)} was accepted`);
}

describe("sandbox-iac serve", () => {
  it("listens on 127.0.0.1:3000 when no option is given", () => {
    expect(parseArgs(["serve"])).toEqual({
      command: "serve",
      host: "127.0.0.1",
      port: 3000,
      dataDir: undefined,
      apiKey: undefined,
      apiKeyFile: undefined,
      agentDir: undefined,
      maxSandboxes: undefined,
      maxSandboxesPerKey: undefined,
      insecureRegistries: [],
      maxStepCacheBytes: undefined,
      maxStepCacheEntries: undefined,
    });
  });

  it("reads every option as --name VALUE and as --name=VALUE", () => {
    const spaced = parseArgs([
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--data-dir",
      "/var/lib/s",
      "--api-key",
      "e2b_ab",
      "--agent-dir",
      "/opt/agent",
      "--max-sandboxes",
      "12",
      "--max-sandboxes-per-key",
      "5",
      "--insecure-registry",
      "registry.lan:5000",
      "--max-step-cache-bytes",
      "1048576",
      "--max-step-cache-entries",
      "50",
    ]);
    const joined = parseArgs([
      "serve",
      "--host=0.0.0.0",
      "--port=0",
      "--data-dir=/var/lib/s",
      "--api-key=e2b_ab",
      "--agent-dir=/opt/agent",
      "--max-sandboxes=12",
      "--max-sandboxes-per-key=5",
      "--insecure-registry=registry.lan:5000",
      "--max-step-cache-bytes=1048576",
      "--max-step-cache-entries=50",
    ]);
    const expected = {
      command: "serve",
      host: "0.0.0.0",
      port: 0,
      dataDir: "/var/lib/s",
      apiKey: "e2b_ab",
      apiKeyFile: undefined,
      agentDir: "/opt/agent",
      maxSandboxes: 12,
      maxSandboxesPerKey: 5,
      insecureRegistries: ["registry.lan:5000"],
      maxStepCacheBytes: 1048576,
      maxStepCacheEntries: 50,
    };
    expect(spaced).toEqual(expected);
    expect(joined).toEqual(expected);
  });

  it("reads --api-key-file PATH", () => {
    expect(parseArgs(["serve", "--api-key-file", "/etc/sbx/key"])).toMatchObject({
      apiKey: undefined,
      apiKeyFile: "/etc/sbx/key",
    });
  });

  it("refuses --api-key and --api-key-file together, without showing the key", () => {
    const err = refusal(["serve", "--api-key", "e2b_0123456789ab", "--api-key-file", "/k"]);
    expect(err.message).toBe(
      'cli failed: --api-key-file must be the only source of the key, but --api-key was given too, got "/k": give the key one way: --api-key-file (preferred) or --api-key',
    );
    expect(err.message).not.toContain("e2b_0123456789ab");
  });

  it("refuses an empty --api-key-file", () => {
    expect(refusal(["serve", "--api-key-file="]).message).toBe(
      'cli failed: --api-key-file must be a file path, got ""',
    );
  });

  it("keeps every --insecure-registry and refuses one that is not host:port", () => {
    expect(
      parseArgs(["serve", "--insecure-registry", "a.lan:5000", "--insecure-registry=b.lan"]),
    ).toMatchObject({ insecureRegistries: ["a.lan:5000", "b.lan"] });
    expect(refusal(["serve", "--insecure-registry", "http://a.lan/x"]).message).toContain(
      "--insecure-registry must be a registry as host:port",
    );
  });

  it("keeps the last of a repeated option", () => {
    expect(parseArgs(["serve", "--port", "1", "--port", "2"])).toMatchObject({ port: 2 });
  });

  it.each([["-1"], ["65536"], ["80x"], [""], ["--host"]])("refuses --port %j", (port) => {
    const err = refusal(["serve", "--port", port]);
    expect(err.message).toBe(
      `cli failed: --port must be an integer from 0 to 65535, got ${JSON.stringify(port)}`,
    );
    expect(err.field).toBe("--port");
  });

  it.each([["0"], ["-3"], ["2.5"], ["many"], [""]])("refuses --max-sandboxes %j", (value) => {
    const err = refusal(["serve", "--max-sandboxes", value]);
    expect(err.message).toBe(
      `cli failed: --max-sandboxes must be an integer >= 1, got ${JSON.stringify(value)}: for example --max-sandboxes 8`,
    );
    expect(err.field).toBe("--max-sandboxes");
    expect(refusal(["serve", `--max-sandboxes-per-key=${value}`]).field).toBe(
      "--max-sandboxes-per-key",
    );
  });

  it("reads --max-step-cache-bytes with a K, M, G or T suffix as powers of 1024", () => {
    expect(parseArgs(["serve", "--max-step-cache-bytes", "20G"])).toMatchObject({
      maxStepCacheBytes: 20 * 1024 ** 3,
    });
    expect(parseArgs(["serve", "--max-step-cache-bytes=512m"])).toMatchObject({
      maxStepCacheBytes: 512 * 1024 ** 2,
    });
  });

  it.each([["0"], ["10GB"], ["1.5G"], ["-1"], [""]])(
    "refuses --max-step-cache-bytes %j, saying what a size is",
    (value) => {
      const err = refusal(["serve", "--max-step-cache-bytes", value]);
      expect(err.message).toBe(
        `cli failed: --max-step-cache-bytes must be a size >= 1 in bytes, or with a K, M, G or T suffix (powers of 1024), got ${JSON.stringify(value)}: for example --max-step-cache-bytes 20G`,
      );
      expect(refusal(["serve", `--max-step-cache-entries=${value}`]).field).toBe(
        "--max-step-cache-entries",
      );
    },
  );

  it("refuses an empty API key", () => {
    expect(refusal(["serve", "--api-key="]).message).toBe(
      'cli failed: --api-key must be a non-empty key such as e2b_<hex>, got ""',
    );
  });

  it("names an unknown option, lists the known ones and says how to get help", () => {
    const err = refusal(["serve", "--prot", "80"]);
    expect(err.message).toBe(
      'cli failed: option must be one of --host, --port, --data-dir, --api-key, --api-key-file, --agent-dir, --max-sandboxes, --max-sandboxes-per-key, --insecure-registry, --tls-cert, --tls-key, --domain, --max-step-cache-bytes, --max-step-cache-entries, got "--prot": did you mean --port? (run `sandbox-iac serve --help`)',
    );
    expect(refusal(["serve", "-p", "80"]).message).toContain('got "-p"');
    expect(refusal(["serve", "--verbose=1"]).message).toContain('got "--verbose"');
  });

  it("says an option at the end lacks its value", () => {
    expect(refusal(["serve", "--data-dir"]).message).toBe(
      "cli failed: --data-dir must be followed by a value, got nothing: run `sandbox-iac serve --help`",
    );
  });

  it("takes --tls-cert and --tls-key together, with --domain", () => {
    expect(
      parseArgs(["serve", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--domain", "x.test"]),
    ).toMatchObject({ tls: { certFile: "c.pem", keyFile: "k.pem" }, domain: "x.test" });
    expect(refusal(["serve", "--tls-cert", "c.pem"]).message).toBe(
      "cli failed: --tls-key must be given together with --tls-cert, got nothing: pass both PEM files, e.g. --tls-cert cert.pem --tls-key key.pem",
    );
  });

  it("refuses a stray argument", () => {
    expect(refusal(["serve", "8080"]).message).toBe(
      'cli failed: argument must be an option (--host, --port, --data-dir, --api-key, --api-key-file, --agent-dir, --max-sandboxes, --max-sandboxes-per-key, --insecure-registry, --tls-cert, --tls-key, --domain, --max-step-cache-bytes, --max-step-cache-entries), got "8080": run `sandbox-iac serve --help`',
    );
  });

  it("refuses an unknown command", () => {
    expect(refusal(["start"]).message).toBe(
      'cli failed: command must be serve, status or terraform, got "start": run `sandbox-iac --help`',
    );
    expect(refusal(["serv"]).message).toContain("did you mean `sandbox-iac serve`?");
    expect(refusal(["stauts"]).message).toContain("did you mean `sandbox-iac status`?");
  });

  it.each([[[]], [["help"]], [["--help"]], [["-h"]]])("shows the general help for %j", (argv) => {
    expect(parseArgs(argv)).toEqual({ command: "help", text: USAGE });
  });

  it.each([
    [["serve", "-h"], SERVE_USAGE],
    [["serve", "--bogus", "--help"], SERVE_USAGE],
    [["status", "--help"], STATUS_USAGE],
    [["terraform", "install", "--help"], TERRAFORM_USAGE],
  ])("shows each command's own help for %j", (argv, text) => {
    expect(parseArgs(argv)).toEqual({ command: "help", text });
  });

  it("gives each command its own help, without the internal --agent-dir", () => {
    expect(new Set([USAGE, SERVE_USAGE, STATUS_USAGE, TERRAFORM_USAGE]).size).toBe(4);
    expect(SERVE_USAGE).toContain("--port PORT");
    expect(TERRAFORM_USAGE).toContain("--dir DIR");
    for (const text of [USAGE, SERVE_USAGE, STATUS_USAGE, TERRAFORM_USAGE])
      expect(text).not.toContain("--agent-dir");
    expect(USAGE).toContain("npm run build");
  });

  it.each([[["--version"]], [["-V"]]])("asks for the version with %j", (argv) => {
    expect(parseArgs(argv)).toEqual({ command: "version" });
  });

  it("reads status, which takes no options, and suggests nothing it does not have", () => {
    expect(parseArgs(["status"])).toEqual({ command: "status" });
    expect(refusal(["status", "--all"]).message).toContain("none (this command takes no options)");
  });
});

describe("sandbox-iac terraform install", () => {
  it("installs into the default plugin directory", () => {
    expect(parseArgs(["terraform", "install"])).toEqual({
      command: "terraform-install",
      dir: defaultPluginDir(),
    });
  });

  it("reads --dir DIR and --dir=DIR", () => {
    for (const argv of [
      ["terraform", "install", "--dir", "/p"],
      ["terraform", "install", "--dir=/p"],
    ]) {
      expect(parseArgs(argv)).toEqual({ command: "terraform-install", dir: "/p" });
    }
  });

  it("refuses an unknown subcommand", () => {
    expect(refusal(["terraform", "init"]).message).toBe(
      'cli failed: terraform subcommand must be install, got "init": run `sandbox-iac terraform install [--dir DIR]`',
    );
  });

  it("names an unknown option and the one it accepts", () => {
    expect(refusal(["terraform", "install", "--directory", "/p"]).message).toBe(
      'cli failed: option must be one of --dir, got "--directory": did you mean --dir? (run `sandbox-iac terraform install [--dir DIR]`)',
    );
  });

  it("says --dir lacks its value, or that it is empty", () => {
    expect(refusal(["terraform", "install", "--dir"]).message).toBe(
      "cli failed: --dir must be followed by a value, got nothing: run `sandbox-iac terraform install [--dir DIR]`",
    );
    expect(refusal(["terraform", "install", "--dir="]).message).toBe(
      'cli failed: --dir must be a directory path, got ""',
    );
  });

  it("refuses a stray argument", () => {
    expect(refusal(["terraform", "install", "/p"]).message).toContain(
      'argument must be an option (--dir), got "/p"',
    );
  });
});
