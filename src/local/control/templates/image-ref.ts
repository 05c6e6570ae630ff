/**
 * Container image references as Docker reads them: `python:3.12` is
 * `docker.io/library/python:3.12`, `e2bdev/base` is
 * `docker.io/e2bdev/base:latest`, a first component with a `.` or `:` (or
 * `localhost`) is a registry host.
 *
 * @module
 */

/** Docker Hub's registry name. */
const DOCKER_HUB = "docker.io";
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A fully qualified image reference. */
export interface ImageRef {
  /** Registry host, with its port when given, e.g. `docker.io` or `127.0.0.1:5000`. */
  registry: string;
  /** Repository path, e.g. `library/python`. */
  repository: string;
  /** The tag, `latest` unless a tag or digest was given. */
  tag?: string | undefined;
  /** The manifest digest, when pinned by one. */
  digest?: string | undefined;
  /** `registry/repository[:tag][@digest]`, what skopeo is given after `docker://`. */
  full: string;
}

/**
 * Parses `ref` as Docker does; returns a sentence saying what is wrong when it
 * is not a valid reference.
 */
export function parseImageRef(ref: string): ImageRef | string {
  let rest = ref.trim();
  if (rest === "") return "an image reference such as python:3.12 or e2bdev/base";
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return `a digest like sha256:<64 hex digits> after @`;
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return "a tag of letters, digits, '_', '.' and '-' after ':'";
  }
  const parts = rest.split("/");
  let registry = DOCKER_HUB;
  const first = parts[0];
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    registry = first === "index.docker.io" ? DOCKER_HUB : first;
    parts.shift();
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift("library");
  if (parts.length === 0 || !parts.every((p) => PATH_COMPONENT.test(p)))
    return "a repository path of lowercase letters, digits and separators (., _, __, -)";
  if (tag === undefined && digest === undefined) tag = "latest";
  const repository = parts.join("/");
  const full = `${registry}/${repository}${tag ? `:${tag}` : ""}${digest ? `@${digest}` : ""}`;
  return { registry, repository, tag, digest, full };
}

/**
 * True when the registry is on the loopback interface (`localhost`,
 * `127.0.0.0/8`, `::1`): plain HTTP is allowed there without configuration,
 * as Docker does.
 */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith("[")
    ? registry.slice(1, registry.indexOf("]"))
    : registry.replace(/:\d+$/, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
