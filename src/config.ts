/**
 * Configuration in one place: where the control API is, how a sandbox is
 * reached, and which API key to send.
 *
 * Precedence for every value: the explicit option, then the environment
 * variable ({@link ENV_VARS}), then the embedded default (the local service at
 * {@link LOCAL_DEFAULT_API_URL}). Reference: docs/control-api.md#hosts-and-urls.
 *
 * @module
 */

import { inspect } from "node:util";
import { invalidArgument, registerSecret } from "./errors";
import { ENV_VARS, LOCAL_DEFAULT_API_URL } from "./wire/control";
import { ENVD_HEADERS, ENVD_PORT } from "./wire/envd";
import { sandboxIDProblem } from "./wire/ids";

const OPERATION = "config.resolve";

/** Options of {@link resolveConfig}. */
export interface ConfigOptions {
  /**
   * The API key sent as `X-API-Key`.
   * @default the `E2B_API_KEY` environment variable; otherwise no key is sent
   */
  apiKey?: string | undefined;
  /**
   * Base URL of the control API, e.g. `http://127.0.0.1:3000`.
   * @default the `E2B_API_URL` environment variable; otherwise `https://api.<domain>`
   * when a domain is set; otherwise the local service `http://127.0.0.1:3000`
   */
  apiUrl?: string | undefined;
  /**
   * One URL that serves every sandbox; the sandbox is chosen by the routing
   * headers `E2b-Sandbox-Id` and `E2b-Sandbox-Port`.
   * @default the `E2B_SANDBOX_URL` environment variable; otherwise sandboxes are
   * reached at `https://<port>-<sandboxID>.<domain>`, or at the API URL (with the
   * routing headers) when no domain is set
   */
  sandboxUrl?: string | undefined;
  /**
   * The service's domain, e.g. `e2b.app`.
   * @default the `E2B_DOMAIN` environment variable; otherwise none (the local service)
   */
  domain?: string | undefined;
  /**
   * The environment to read variables from.
   * @default `process.env`
   */
  env?: NodeJS.ProcessEnv | undefined;
  /**
   * Receives the one-time notice that the local default is used.
   * @default writes the line to stderr
   */
  log?: ((line: string) => void) | undefined;
  /**
   * Whether this resolution may give the one-time notice of the local default.
   * A check that resolves only to find problems passes false, so the notice is
   * left for the resolution that is used.
   * @default true
   */
  announce?: boolean | undefined;
  /**
   * How the caller's users name the options, for error messages: e.g.
   * `api_key` in a Terraform provider block, `sandbox-iac:apiKey` in Pulumi config.
   * @default {@link DEFAULT_OPTION_NAMES} (the TypeScript option names)
   */
  optionNames?: Partial<OptionNames> | undefined;
}

/** How users name the API key and URL options, as error messages should. */
export interface OptionNames {
  /** e.g. `apiKey`, `api_key`, `sandbox-iac:apiKey`. */
  readonly apiKey: string;
  /** e.g. `apiUrl`, `api_url`, `sandbox-iac:apiUrl`. */
  readonly apiUrl: string;
}

/** The TypeScript option names. */
const DEFAULT_OPTION_NAMES: OptionNames = { apiKey: "apiKey", apiUrl: "apiUrl" };

/** Where a configuration value came from. */
export type ConfigSource = "option" | "env" | "domain" | "default" | "unset";

/** Where each value of a {@link ResolvedConfig} came from. */
export interface ConfigSources {
  apiKey: ConfigSource;
  apiUrl: ConfigSource;
  sandboxUrl: ConfigSource;
  domain: ConfigSource;
}

/** How to reach one port of one sandbox. */
export interface SandboxAddress {
  /** Base URL, without a trailing slash. */
  url: string;
  /** Headers to send with every request (routing headers when the URL is shared). */
  headers: Record<string, string>;
}

/**
 * The resolved configuration. The API key is readable as `apiKey` but never
 * shown by `JSON.stringify` or `util.inspect`.
 */
export interface ResolvedConfig {
  /** The API key, or undefined when none was configured. */
  readonly apiKey: string | undefined;
  /** Base URL of the control API, without a trailing slash. */
  readonly apiUrl: string;
  /** The shared sandbox URL, without a trailing slash, when one is configured. */
  readonly sandboxUrl: string | undefined;
  /** The service domain, when one is configured. */
  readonly domain: string | undefined;
  /** Where each value came from. */
  readonly source: Readonly<ConfigSources>;
  /** How the caller's users name the options (for error messages). */
  readonly optionNames: OptionNames;
  /**
   * The address of `port` inside the sandbox `sandboxID`.
   * @param port - @default {@link ENVD_PORT} (envd)
   */
  sandboxBaseUrl(sandboxID: string, port?: number): SandboxAddress;
  /** A JSON form with the API key redacted. */
  toJSON(): Record<string, unknown>;
}

let localDefaultAnnounced = false;

/** Resolves the configuration from options, the environment and the defaults. */
export function resolveConfig(options: ConfigOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const domainPick = pick(options.domain, env[ENV_VARS.domain]);
  const domain =
    domainPick.value === undefined ? undefined : parseDomain(domainPick.value, domainPick.source);

  const sandboxPick = pick(options.sandboxUrl, env[ENV_VARS.sandboxUrl]);
  const sandboxUrl =
    sandboxPick.value === undefined
      ? undefined
      : parseUrl(sandboxPick.value, "sandboxUrl", ENV_VARS.sandboxUrl, sandboxPick.source);

  const apiPick = pick(options.apiUrl, env[ENV_VARS.apiUrl]);
  let apiUrl: string;
  let apiSource: ConfigSource = apiPick.source;
  if (apiPick.value !== undefined) {
    apiUrl = parseUrl(apiPick.value, "apiUrl", ENV_VARS.apiUrl, apiPick.source);
  } else if (domain !== undefined) {
    apiUrl = `https://api.${domain}`;
    apiSource = "domain";
  } else {
    apiUrl = LOCAL_DEFAULT_API_URL;
    apiSource = "default";
    if (!localDefaultAnnounced && options.announce !== false) {
      localDefaultAnnounced = true;
      log(
        `sandbox-iac: no ${ENV_VARS.apiUrl} or ${ENV_VARS.domain} set; using the local service at ${LOCAL_DEFAULT_API_URL} (start it with \`sandbox-iac serve\`)`,
      );
    }
  }

  const keyPick = pick(options.apiKey, env[ENV_VARS.apiKey]);
  const source: ConfigSources = {
    apiKey: keyPick.source,
    apiUrl: apiSource,
    sandboxUrl: sandboxPick.source,
    domain: domainPick.source,
  };
  const optionNames = { ...DEFAULT_OPTION_NAMES, ...options.optionNames };
  return new Config(
    keyPick.value,
    apiUrl,
    sandboxUrl,
    domain,
    Object.freeze(source),
    Object.freeze(optionNames),
  );
}

class Config implements ResolvedConfig {
  // A private field: invisible to JSON.stringify, util.inspect and Object.keys.
  readonly #apiKey: string | undefined;

  constructor(
    apiKey: string | undefined,
    readonly apiUrl: string,
    readonly sandboxUrl: string | undefined,
    readonly domain: string | undefined,
    readonly source: Readonly<ConfigSources>,
    readonly optionNames: OptionNames,
  ) {
    this.#apiKey = apiKey;
    // Known to be secret: redacted by value wherever it might be echoed.
    registerSecret(apiKey);
  }

  get apiKey(): string | undefined {
    return this.#apiKey;
  }

  sandboxBaseUrl(sandboxID: string, port: number = ENVD_PORT): SandboxAddress {
    const idProblem = sandboxIDProblem(sandboxID);
    if (idProblem !== undefined) {
      throw invalidArgument(
        "config.sandboxBaseUrl",
        "sandboxID",
        sandboxID,
        idProblem.allowed,
        idProblem.fix ?? "pass the sandboxID returned by create",
      );
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw invalidArgument("config.sandboxBaseUrl", "port", port, "an integer in 1..65535");
    }
    const routing = {
      [ENVD_HEADERS.sandboxID]: sandboxID,
      [ENVD_HEADERS.sandboxPort]: String(port),
    };
    if (this.sandboxUrl !== undefined) return { url: this.sandboxUrl, headers: routing };
    if (this.domain !== undefined)
      return { url: `https://${port}-${sandboxID}.${this.domain}`, headers: {} };
    // The local service serves sandboxes on its own address, routed by header.
    return { url: this.apiUrl, headers: routing };
  }

  toJSON(): Record<string, unknown> {
    return {
      apiKey: this.#apiKey === undefined ? undefined : "[redacted]",
      apiUrl: this.apiUrl,
      sandboxUrl: this.sandboxUrl,
      domain: this.domain,
      source: this.source,
    };
  }

  [inspect.custom](): string {
    return `ResolvedConfig ${inspect(this.toJSON())}`;
  }
}

function pick(
  option: string | undefined,
  envValue: string | undefined,
): { value: string | undefined; source: ConfigSource } {
  if (option !== undefined) return { value: option, source: "option" };
  // An empty variable counts as unset, as shells often export VAR= to clear it.
  if (envValue !== undefined && envValue.trim() !== "")
    return { value: envValue.trim(), source: "env" };
  return { value: undefined, source: "unset" };
}

function parseUrl(value: string, option: string, envVar: string, source: ConfigSource): string {
  const field = source === "env" ? envVar : option;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search !== "" ||
    url.hash !== ""
  ) {
    throw invalidArgument(
      OPERATION,
      field,
      value,
      "an absolute http(s) URL without query or fragment, e.g. http://127.0.0.1:3000",
      `fix the ${option} option or the ${envVar} environment variable`,
    );
  }
  return url.href.replace(/\/+$/, "");
}

function parseDomain(value: string, source: ConfigSource): string {
  const field = source === "env" ? ENV_VARS.domain : "domain";
  const domain = value.trim().toLowerCase();
  if (
    !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$/.test(domain)
  ) {
    throw invalidArgument(
      OPERATION,
      field,
      value,
      "a host name such as e2b.app (no scheme, no path)",
      `fix the domain option or the ${ENV_VARS.domain} environment variable`,
    );
  }
  return domain;
}
