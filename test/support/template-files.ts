/**
 * What a template holds, seen as a user would: a sandbox started from it,
 * one file read there, the sandbox killed again.
 */
import { createSandboxClient } from "../../src/client/sandbox";
import { resolveConfig } from "../../src/config";

/** The part of a test service this helper needs (the Pulumi and Terraform fixtures both have it). */
interface ServiceCalls {
  apiUrl: string;
  apiKey: string;
  call(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/** The text of `file` in a new sandbox of `template` (ID or name); the sandbox is killed afterwards. */
export async function fileInTemplate(
  svc: ServiceCalls,
  template: string,
  file: string,
): Promise<string> {
  const created = await svc.call("POST", "/sandboxes", {
    templateID: template,
    timeout: 300,
    secure: true,
  });
  if (created.status !== 201) {
    throw new Error(`no sandbox from template ${template}: ${JSON.stringify(created.body)}`);
  }
  const { sandboxID, envdAccessToken } = created.body as {
    sandboxID: string;
    envdAccessToken?: string;
  };
  try {
    const sandbox = createSandboxClient({
      sandboxID,
      accessToken: envdAccessToken,
      config: resolveConfig({ apiUrl: svc.apiUrl, apiKey: svc.apiKey, env: {} }),
    });
    return await sandbox.readText(file);
  } finally {
    await svc.call("DELETE", `/sandboxes/${sandboxID}`);
  }
}
