/**
 * Shared set-up of the SDK conformance suites: the local service and one
 * sandbox made through the SDK under test, killed and closed afterwards.
 */
import { startService, type TestService } from "../support/service";

/** The service and the sandbox of one describe block, set by `beforeAll`. */
export interface SdkSandbox<S> {
  service: TestService;
  sbx: S;
}

/**
 * Registers the hooks of a conformance describe block: starts the service,
 * creates a sandbox with `create` (the SDK's own `Sandbox.create`), and kills
 * it and closes the service afterwards.
 */
export function sdkSandbox<S extends { kill(): Promise<unknown> }>(
  create: (service: TestService) => Promise<S>,
): SdkSandbox<S> {
  const fixture = {} as SdkSandbox<S>;
  beforeAll(async () => {
    fixture.service = await startService();
    fixture.sbx = await create(fixture.service);
  });
  afterAll(async () => {
    await fixture.sbx?.kill().catch(() => undefined);
    await fixture.service?.close();
  });
  return fixture;
}
