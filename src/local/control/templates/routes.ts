/**
 * Every template and snapshot route of the control API, for the service's
 * router to mount.
 *
 * @module
 */
import type { Route } from "../http";
import type { TemplateRouteDeps } from "./route-deps";
import { buildRoutes } from "./routes-builds";
import { forkRoutes } from "./routes-fork";
import { snapshotRoutes } from "./routes-snapshots";
import { tagRoutes } from "./routes-tags";
import { templateCrudRoutes } from "./routes-templates";

/**
 * All `/templates*`, `/v2/templates*`, `/v3/templates`, the upload target,
 * `/snapshots` and `POST /sandboxes/:sandboxID/snapshots`. Routes with fixed
 * segments come before routes with parameters at the same place
 * (`/templates/tags` before `/templates/:templateID`), so a first-match
 * router picks the right one.
 */
export function templateRoutes(deps: TemplateRouteDeps): Route[] {
  const tags = tagRoutes(deps);
  return [
    ...[...tags.routes, ...templateCrudRoutes(deps, tags.deleteTags), ...buildRoutes(deps)].map(
      withAccessTokens,
    ),
    ...snapshotRoutes(deps),
    ...forkRoutes(deps),
  ];
}

/**
 * E2B takes an access token (`Authorization: Bearer`) besides the API key on
 * its template operations; sandbox and snapshot routes stay API-key only.
 */
function withAccessTokens(route: Route): Route {
  return (route.auth ?? "apiKey") === "apiKey" ? { ...route, auth: "apiKeyOrAccessToken" } : route;
}
