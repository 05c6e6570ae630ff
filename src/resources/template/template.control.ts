/**
 * The control-API calls the Template resource makes, as a narrow port over the
 * typed control client, so the lifecycle reads as the build flow of
 * docs/control-api.md#build-flow and nothing else.
 *
 * @module
 */
import { createControlClient } from "../../client/control";
import { unlessNotFound } from "../core/not-found";
import type { ResourceContext } from "../core/lifecycle";

/** A build log entry (`BuildLogEntry`). */
export interface BuildLogEntry {
  timestamp: string;
  level: string;
  message: string;
  step?: string | undefined;
}

/** `TemplateBuildInfo`, the answer of the build status call. */
export interface BuildInfo {
  status: string;
  logEntries: BuildLogEntry[];
  reason?:
    | { message: string; step?: string | undefined; logEntries?: BuildLogEntry[] | undefined }
    | undefined;
}

/** `TemplateRequestResponseV3`. */
export interface CreatedTemplate {
  templateID: string;
  buildID: string;
  public: boolean;
  names: string[];
  tags: string[];
}

/** What the Template resource reads back about a template. */
export interface TemplateState {
  templateID: string;
  public: boolean;
  names: string[];
  /** The builds, each with its status, envd version, resources and creation time. */
  builds: Array<{
    buildID: string;
    status: string;
    envdVersion?: string | undefined;
    cpuCount: number;
    memoryMB: number;
    createdAt: string;
  }>;
}

/** The control calls of the Template resource. Every call throws `SandboxIacError`. */
export interface TemplateControl {
  createTemplate(body: {
    name: string;
    tags?: string[];
    cpuCount?: number;
    memoryMB?: number;
  }): Promise<CreatedTemplate>;
  fileUploadLink(
    templateID: string,
    hash: string,
  ): Promise<{ present: boolean; url?: string | undefined }>;
  startBuild(templateID: string, buildID: string, body: object): Promise<void>;
  buildStatus(templateID: string, buildID: string, logsOffset: number): Promise<BuildInfo>;
  /** The ID of the template named `name` (without tag), `undefined` when there is none. */
  lookupName(name: string): Promise<string | undefined>;
  /** `undefined` when the template does not exist. */
  getTemplate(templateID: string): Promise<TemplateState | undefined>;
  listTags(templateID: string): Promise<Array<{ tag: string; buildID: string }>>;
  assignTags(target: string, tags: string[]): Promise<void>;
  deleteTags(name: string, tags: string[]): Promise<void>;
  /** Resolves false when the template was already gone. */
  deleteTemplate(templateID: string): Promise<boolean>;
}

/** Builds the port from the resource context (the control client over `ctx.config`). */
export function templateControl(ctx: ResourceContext): TemplateControl {
  const client = createControlClient({ config: ctx.config });
  const options = ctx.signal ? { signal: ctx.signal } : {};
  return {
    createTemplate: (body) => client.createTemplateV3(body, options),
    fileUploadLink: (templateID, hash) =>
      client.getTemplateFilesUploadLink(templateID, hash, options),
    startBuild: (templateID, buildID, body) =>
      client.startTemplateBuildV2(templateID, buildID, body, options),
    buildStatus: (templateID, buildID, logsOffset) =>
      client.getTemplateBuildStatus(templateID, buildID, { logsOffset }, options),
    async lookupName(name) {
      const found = await unlessNotFound(client.getTemplateByAlias(name, options), undefined);
      return found?.templateID;
    },
    async getTemplate(templateID) {
      const page = await unlessNotFound(
        client.getTemplate(templateID, undefined, options),
        undefined,
      );
      if (!page) return undefined;
      const found = page.template;
      return {
        templateID: found.templateID,
        public: found.public,
        names: found.names,
        builds: found.builds.map((b) => ({
          buildID: b.buildID,
          status: b.status,
          envdVersion: b.envdVersion,
          cpuCount: b.cpuCount,
          memoryMB: b.memoryMB,
          createdAt: b.createdAt,
        })),
      };
    },
    listTags: (templateID) => client.listTemplateTags(templateID, options),
    async assignTags(target, tags) {
      await client.assignTemplateTags({ target, tags }, options);
    },
    deleteTags: (name, tags) => client.deleteTemplateTags({ name, tags }, options),
    async deleteTemplate(templateID) {
      return unlessNotFound(
        client.deleteTemplate(templateID, options).then(() => true),
        false,
      );
    },
  };
}
