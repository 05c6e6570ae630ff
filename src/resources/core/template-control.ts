/**
 * The control-API calls about templates, as a narrow port over the typed
 * control client, so the Template lifecycle reads as the build flow of
 * docs/control-api.md#build-flow and nothing else. Shared by the Template resource and
 * the `template` data source.
 *
 * @module
 */
import {
  createControlClient,
  type TemplateBuildInfo,
  type TemplateBuildRequestV3,
  type TemplateBuildStartV2,
  type TemplateRequestResponseV3,
} from "../../client/control";
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { unlessNotFound } from "./not-found";
import type { ResourceContext } from "./lifecycle";

/** An archive upload ends after this long; the SDK allows one hour. */
const UPLOAD_TIMEOUT_MS = 60 * 60 * 1000;

/** A COPY archive spooled to a local file, ready to upload. */
interface SpooledArchiveFile {
  /** The archive file. */
  path: string;
  /** Its size in bytes. */
  size: number;
}

/** The part of `TemplateBuildInfo` (the build status answer) the resource reads. */
type BuildInfo = Pick<TemplateBuildInfo, "status" | "logEntries" | "reason">;

/** The part of `TemplateRequestResponseV3` the resource reads. */
type CreatedTemplate = Pick<
  TemplateRequestResponseV3,
  "templateID" | "buildID" | "public" | "names" | "tags"
>;

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
    /** The pulled image's manifest digest (a sandbox-iac extension; absent elsewhere). */
    imageDigest?: string | undefined;
    cpuCount: number;
    memoryMB: number;
    /** The `minFreeDiskMb` it was requested with (a sandbox-iac extension; absent elsewhere). */
    minFreeDiskMb?: number | undefined;
    createdAt: string;
  }>;
}

/** The control calls of the Template resource. Every call throws `SandboxIacError`. */
export interface TemplateControl {
  createTemplate(
    body: Pick<TemplateBuildRequestV3, "tags" | "cpuCount" | "memoryMB" | "minFreeDiskMb"> & {
      name: string;
    },
  ): Promise<CreatedTemplate>;
  fileUploadLink(
    templateID: string,
    hash: string,
  ): Promise<{ present: boolean; url?: string | undefined }>;
  /** PUTs a spooled COPY archive to the link of {@link TemplateControl.fileUploadLink}. */
  uploadFiles(url: string, archive: SpooledArchiveFile): Promise<void>;
  startBuild(templateID: string, buildID: string, body: TemplateBuildStartV2): Promise<void>;
  buildStatus(templateID: string, buildID: string, logsOffset: number): Promise<BuildInfo>;
  /** Cancels a build still running (a sandbox-iac extension; E2B refuses it with 404 or 405). */
  cancelBuild(templateID: string, buildID: string): Promise<void>;
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
    uploadFiles: (url, archive) =>
      client.uploadTemplateFiles(
        url,
        {
          size: archive.size,
          open: () => Readable.toWeb(createReadStream(archive.path)) as ReadableStream<Uint8Array>,
        },
        { ...options, timeoutMs: UPLOAD_TIMEOUT_MS },
      ),
    startBuild: (templateID, buildID, body) =>
      client.startTemplateBuildV2(templateID, buildID, body, options),
    cancelBuild: (templateID, buildID) => client.cancelTemplateBuild(templateID, buildID, options),
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
          imageDigest: b.imageDigest,
          cpuCount: b.cpuCount,
          memoryMB: b.memoryMB,
          minFreeDiskMb: b.minFreeDiskMb,
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

/** The tags the service holds for `buildID` of `templateID`, sorted. */
export async function currentTagsOf(
  control: TemplateControl,
  templateID: string,
  buildID: string,
): Promise<string[]> {
  const tags = await control.listTags(templateID);
  return tags
    .filter((t) => t.buildID === buildID)
    .map((t) => t.tag)
    .sort();
}
