/**
 * Shared set-up of the Terraform scenario tests: the skip notice where
 * terraform is missing, the service and the installed provider, and
 * workspaces pointed at the service and removed afterwards.
 */
import { rmSync } from "node:fs";
import { assertBuilt, startTestService, type TestService } from "../pulumi/support";
import type { ServiceOptions } from "../support/service";
import { Workspace, installPlugins, terraformVersion } from "./workspace";

/** The `terraform` block every configuration of the tests starts with. */
export const REQUIRED_PROVIDERS = `terraform {
  required_providers {
    sandboxiac = { source = "sandbox-iac/sandboxiac" }
  }
}
`;

/**
 * `describe` where terraform is on PATH; elsewhere `describe.skip`, after
 * saying on stderr that `what` (e.g. "the Terraform scenario tests are") is skipped.
 */
export function terraformSuite(what: string): {
  version: string | undefined;
  describe: jest.Describe;
} {
  const version = terraformVersion();
  if (!version) {
    process.stderr.write(
      `terraform is not on PATH: ${what} SKIPPED (install Terraform to run them)\n`,
    );
  }
  return { version, describe: version ? describe : describe.skip };
}

/** The service and plugin directory of one suite, set by `beforeAll`. */
export interface TerraformFixture {
  svc: TestService;
  plugins: string;
  /** A workspace whose environment points at the service; removed after the suite. */
  workspace: (hcl: string, env?: Record<string, string>) => Workspace;
}

/**
 * Registers the hooks of a Terraform suite: checks the build, starts the
 * service, installs the provider; afterwards runs `beforeClose` (e.g. a
 * `terraform destroy`), removes the workspaces and plugins, closes the service.
 */
export function terraformFixture(
  options: {
    beforeClose?: (() => Promise<void>) | undefined;
    /** The service's options, read when it starts (after earlier `beforeAll`s). @default none */
    service?: (() => ServiceOptions) | undefined;
  } = {},
): TerraformFixture {
  const workspaces: Workspace[] = [];
  const fx: TerraformFixture = {
    svc: undefined as unknown as TestService,
    plugins: "",
    workspace: (hcl, env = {}) => {
      const ws = new Workspace(hcl, fx.plugins, {
        E2B_API_URL: fx.svc.apiUrl,
        E2B_API_KEY: fx.svc.apiKey,
        ...env,
      });
      workspaces.push(ws);
      return ws;
    },
  };
  beforeAll(async () => {
    assertBuilt();
    fx.svc = await startTestService(options.service?.() ?? {});
    fx.plugins = installPlugins();
  }, 120_000);
  afterAll(async () => {
    await options.beforeClose?.();
    for (const ws of workspaces) ws.remove();
    if (fx.plugins) rmSync(fx.plugins, { recursive: true, force: true });
    if (fx.svc) await fx.svc.close();
  });
  return fx;
}
