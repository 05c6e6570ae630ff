/**
 * Build routes: file-hash checks and the upload target, starting a build,
 * and reading its status and logs.
 *
 * @module
 */
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import type { TemplateCatalog } from "./catalog";
import { UPLOAD_ROUTE_PREFIX } from "./constants";
import type { TemplateRouteDeps } from "./route-deps";
import { FILES_HASH_RE } from "./file-store";
import { LOG_LEVELS } from "../../../wire/control-requests";
import type { BuildRecord, TemplateRecord } from "./model";
import { isBuildID } from "../../../wire/ids";
import { emptyResponse } from "./responses";
import { imageSourceOf } from "./image-source";
import { internalsOf } from "./registry";
import { requireTemplate } from "./routes-templates";
import { BuildLogsQuery, BuildStartV2, BuildStatusQuery, queryObject } from "./schemas";

function requireBuild(
  catalog: TemplateCatalog,
  req: ControlRequest,
): { t: TemplateRecord; b: BuildRecord } {
  const t = requireTemplate(catalog, req.params.templateID);
  const buildID = req.params.buildID;
  if (!isBuildID(buildID))
    throw serviceError(
      "invalid_argument",
      `Invalid build ID: ${JSON.stringify(buildID)} is not a UUID`,
    );
  const b = catalog.findBuild(t, buildID);
  if (!b)
    throw serviceError("not_found", `build '${buildID}' not found for template '${t.templateID}'`);
  return { t, b };
}

/** The build routes. */
export function buildRoutes(deps: TemplateRouteDeps): Route[] {
  const { catalog, files, builds } = internalsOf(deps.registry);

  const fileLink = async (req: ControlRequest) => {
    const hash = req.params.hash;
    if (!FILES_HASH_RE.test(hash)) throw serviceError("invalid_argument", "Invalid files hash");
    const t = requireTemplate(catalog, req.params.templateID);
    if (files.find(hash)) return { status: 201, body: { present: true } };
    const token = files.grant(t.templateID, hash);
    const base = deps.publicUrl().replace(/\/+$/, "");
    return {
      status: 201,
      body: {
        present: false,
        url: `${base}${UPLOAD_ROUTE_PREFIX}/${t.templateID}/${hash}/${token}`,
      },
    };
  };

  const upload = async (req: ControlRequest) => {
    const hash = req.params.hash;
    if (!FILES_HASH_RE.test(hash)) throw serviceError("invalid_argument", "Invalid files hash");
    const header = req.headers["content-length"];
    const length = header === undefined ? undefined : Number(header);
    if (length !== undefined && !Number.isSafeInteger(length)) {
      throw serviceError(
        "invalid_argument",
        `Content-Length must be a byte count, got ${JSON.stringify(header)}`,
      );
    }
    await files.receive(req.params.templateID, hash, req.params.token, req.raw, length);
    return emptyResponse(200);
  };

  const start = async (req: ControlRequest) => {
    const { t, b } = requireBuild(catalog, req);
    const raw = await req.json();
    if (raw === undefined)
      throw serviceError(
        "invalid_argument",
        "body: a TemplateBuildStartV2 JSON body is required, got nothing",
      );
    const body = parseWith(BuildStartV2, raw, "body");
    if (b.status !== "waiting")
      throw serviceError("invalid_argument", "build is not in waiting state");
    if (body.fromImage !== undefined) {
      if (body.fromTemplate !== undefined)
        throw serviceError(
          "invalid_argument",
          `body: give fromImage or fromTemplate, not both (got fromImage ${JSON.stringify(body.fromImage)} and fromTemplate ${JSON.stringify(body.fromTemplate)})`,
        );
      const image = imageSourceOf(body.fromImage, body.fromImageRegistry);
      await builds.start(t, b, {
        image,
        steps: body.steps,
        force: body.force ?? false,
        startCmd: body.startCmd,
        readyCmd: body.readyCmd,
      });
      return emptyResponse(202);
    }
    const fromName = body.fromTemplate ?? "base";
    const from = catalog.resolve(fromName);
    if (!from) {
      throw serviceError(
        "invalid_argument",
        `body.fromTemplate: template '${fromName}' not found or has no ready build: build it first, or use "base"`,
      );
    }
    await builds.start(t, b, {
      from,
      steps: body.steps,
      force: body.force ?? false,
      startCmd: body.startCmd,
      readyCmd: body.readyCmd,
    });
    return emptyResponse(202);
  };

  const status = async (req: ControlRequest) => {
    const { t, b } = requireBuild(catalog, req);
    const q = parseWith(BuildStatusQuery, queryObject(req.query), "query");
    const logEntries = await catalog.logs.read(b.buildID, {
      offset: q.logsOffset,
      limit: q.limit,
      ...(q.level ? { level: q.level } : {}),
    });
    let reason: Record<string, unknown> | undefined;
    if (b.status === "error" && b.failure) {
      const all = await catalog.logs.all(b.buildID);
      const warnAndUp = all.filter(
        (e) =>
          e.step === b.failure!.step && LOG_LEVELS.indexOf(e.level) >= LOG_LEVELS.indexOf("warn"),
      );
      reason = {
        message: b.failure.message,
        ...(b.failure.step ? { step: b.failure.step } : {}),
        logEntries: warnAndUp,
      };
    }
    return {
      status: 200,
      body: {
        templateID: t.templateID,
        buildID: b.buildID,
        status: b.status,
        logs: [],
        logEntries,
        ...(reason ? { reason } : {}),
      },
    };
  };

  const logs = async (req: ControlRequest) => {
    const { b } = requireBuild(catalog, req);
    const q = parseWith(BuildLogsQuery, queryObject(req.query), "query");
    const minLevel = q.level ? LOG_LEVELS.indexOf(q.level) : 0;
    let entries = (await catalog.logs.all(b.buildID)).filter(
      (e) => LOG_LEVELS.indexOf(e.level) >= minLevel,
    );
    if (q.direction === "forward") {
      const from = q.cursor ?? 0;
      entries = entries.filter((e) => Date.parse(e.timestamp) >= from);
    } else {
      const until = q.cursor ?? Date.now();
      entries = entries.filter((e) => Date.parse(e.timestamp) <= until).reverse();
    }
    return { status: 200, body: { logs: entries.slice(0, q.limit) } };
  };

  // A sandbox-iac extension (E2B has no such call): a client that stops cancels its build.
  const cancel = async (req: ControlRequest) => {
    const { t, b } = requireBuild(catalog, req);
    const why = "the client cancelled it";
    // Waiting: its files are still being uploaded (the client stopped mid-upload).
    if (b.status === "waiting") await builds.cancelWaiting(t, b, why);
    else await builds.cancel(b.buildID, why);
    return emptyResponse(204);
  };

  return [
    { method: "GET", pattern: "/templates/:templateID/files/:hash", handler: fileLink },
    {
      method: "PUT",
      pattern: `${UPLOAD_ROUTE_PREFIX}/:templateID/:hash/:token`,
      handler: upload,
      auth: "none",
    },
    { method: "POST", pattern: "/v2/templates/:templateID/builds/:buildID", handler: start },
    { method: "DELETE", pattern: "/templates/:templateID/builds/:buildID", handler: cancel },
    { method: "GET", pattern: "/templates/:templateID/builds/:buildID/status", handler: status },
    { method: "GET", pattern: "/templates/:templateID/builds/:buildID/logs", handler: logs },
  ];
}
