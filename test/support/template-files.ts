/**
 * What a template or a sandbox holds, seen as a user would: one file read in
 * a sandbox (for a template, one started from it and killed again).
 */
import { createSandboxClient } from "../../src/client/sandbox";
import { resolveConfig } from "../../src/config";

/** The part of a test service this helper needs (the Pulumi and Terraform fixtures both have it). */
interface ServiceCalls {
  apiUrl: string;
  apiKey: string;
  call(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/** The text of `file` in running sandbox `sandboxID` (its envd token read from the control API). */
export async function fileInSandbox(
  svc: ServiceCalls,
  sandboxID: string,
  file: string,
): Promise<string> {
  const detail = await svc.call("GET", `/sandboxes/${sandboxID}`);
  if (detail.status !== 200)
    throw new Error(`no sandbox ${sandboxID}: ${JSON.stringify(detail.body)}`);
  const token = (detail.body as { envdAccessToken?: string }).envdAccessToken;
  return clientOf(svc, sandboxID, token).readText(file);
}

function clientOf(svc: ServiceCalls, sandboxID: string, accessToken: string | undefined) {
  return createSandboxClient({
    sandboxID,
    accessToken,
    config: resolveConfig({ apiUrl: svc.apiUrl, apiKey: svc.apiKey, env: {} }),
  });
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
    return await clientOf(svc, sandboxID, envdAccessToken).readText(file);
  } finally {
    await svc.call("DELETE", `/sandboxes/${sandboxID}`);
  }
}
