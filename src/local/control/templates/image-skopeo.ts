/**
 * Running Debian's `skopeo` for image pulls, and turning its failures into
 * {@link ImagePullError}s whose message names the cause in the user's terms
 * (authentication, a missing image, an unreachable registry) and never holds
 * a password.
 *
 * @module
 */
import { spawn } from "node:child_process";
import * as readline from "node:readline";
import { diesWithService } from "../../runtime/layer-copy";
import type { ImageRef } from "./image-ref";

/** The only platform the local service runs. */
export const PLATFORM = { os: "linux", architecture: "amd64" } as const;
/** Longest tail of skopeo's stderr kept for error messages. */
const STDERR_KEEP = 4000;

/** What went wrong with a pull, for the message and the offline fallback. */
export type PullFailureKind = "auth" | "not_found" | "unreachable" | "platform" | "other";

/** A pull failed; `message` is safe to show (no password). */
export class ImagePullError extends Error {
  constructor(
    readonly kind: PullFailureKind,
    message: string,
  ) {
    super(message);
    this.name = "ImagePullError";
  }
}

/** Options of {@link runSkopeo}. */
export interface SkopeoRun {
  /** The image the run is about, for error messages. */
  ref: ImageRef;
  /** Strings scrubbed from anything skopeo printed before it reaches a message. */
  secrets: readonly string[];
  /** Whether the user gave credentials (fromImage(ref, { username, password })), for the auth message. */
  credentialsGiven: boolean;
  /** Receives each line of skopeo's stdout as it comes. */
  onLine?: ((line: string) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** Runs `skopeo <args>`; resolves with its stdout, or throws a classified {@link ImagePullError}. */
export async function runSkopeo(args: readonly string[], opts: SkopeoRun): Promise<string> {
  const [file, ...rest] = diesWithService(["skopeo", ...args]);
  const child = spawn(file, rest, {
    stdio: ["ignore", "pipe", "pipe"],
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_KEEP)));
  const stdout: string[] = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    stdout.push(line);
    opts.onLine?.(line);
  });
  const code = await new Promise<number | null>((resolve) => {
    child.on("close", (c) => resolve(c));
    child.on("error", () => resolve(null));
  });
  if (code === 0) return stdout.join("\n");
  if (opts.signal?.aborted) throw new ImagePullError("other", "the pull was cancelled");
  throw classifySkopeoFailure(stderr, opts);
}

/**
 * The {@link ImagePullError} for a failed skopeo run that printed `stderr`
 * (password scrubbed). Only the registry's or the network's answer is
 * matched (see {@link registryAnswer}), and the HTTP status only in the forms
 * skopeo prints it, so that the image's name, a port or a digest never reads
 * as a cause: a missing image on port 45401 was reported as an
 * authentication failure (its "401").
 */
export function classifySkopeoFailure(
  stderr: string,
  run: Pick<SkopeoRun, "ref" | "secrets" | "credentialsGiven">,
): ImagePullError {
  const { ref } = run;
  const detail = scrub(skopeoMessage(stderr), run.secrets);
  const answer = registryAnswer(detail, ref);
  if (
    /no image found in (?:manifest list|image index) for architecture|choosing (?:an )?image/i.test(
      answer,
    )
  ) {
    return new ImagePullError(
      "platform",
      `image ${ref.full} has no ${PLATFORM.os}/${PLATFORM.architecture} variant: ${detail}: the local service runs ${PLATFORM.os}/${PLATFORM.architecture} images only`,
    );
  }
  // Before the auth rule: a registry that says the name or tag is unknown has
  // looked it up for this client, whatever else it adds.
  if (
    /manifest unknown|name unknown|repository name not known|blob unknown|StatusCode: 404\b|\b404 \(Not Found\)/i.test(
      answer,
    )
  ) {
    return notFound(ref, detail);
  }
  if (
    /\bunauthorized\b|authentication required|invalid username\/password|(?<!permission )\bdenied\b|StatusCode: 40[13]\b|\b401 \(Unauthorized\)|\b403 \(Forbidden\)/i.test(
      answer,
    )
  ) {
    return new ImagePullError(
      "auth",
      run.credentialsGiven
        ? `authentication to registry ${ref.registry} failed for image ${ref.full}: ${detail}: check the username and password of fromImage(ref, { username, password }), or run \`docker login ${ref.registry}\` on the service's host`
        : // Docker Hub and others answer a missing image like a private one to a client without credentials.
          `registry ${ref.registry} refused image ${ref.full}, and no credentials were given with fromImage(): ${detail}: the image does not exist, or it is private: check the name and tag; for a private image pass fromImage(ref, { username, password }) or run \`docker login ${ref.registry}\` on the service's host`,
    );
  }
  if (/server gave HTTP response to HTTPS client/i.test(answer)) {
    return new ImagePullError(
      "unreachable",
      `registry ${ref.registry} speaks plain HTTP: ${detail}: start the service with --insecure-registry ${ref.registry} to allow it`,
    );
  }
  // The whole message: "pinging container registry <host>" stands before the
  // host, and none of these phrases can be spelled by a name (no spaces).
  if (
    /connection refused|no such host|dial tcp|i\/o timeout|network is unreachable|no route to host|TLS handshake|connection reset|pinging container registry/i.test(
      detail,
    )
  ) {
    return new ImagePullError(
      "unreachable",
      `registry ${ref.registry} cannot be reached to pull ${ref.full}: ${detail}`,
    );
  }
  if (/\bnot found\b/i.test(answer)) return notFound(ref, detail);
  return new ImagePullError("other", `pulling ${ref.full} failed: ${detail}`);
}

function notFound(ref: ImageRef, detail: string): ImagePullError {
  return new ImagePullError(
    "not_found",
    `image ${ref.full} does not exist in registry ${ref.registry}: ${detail}: check the name and tag`,
  );
}

/**
 * The part of skopeo's message after its last mention of the image
 * (`<registry>/<repository>`, else the registry): the registry's or the
 * network's answer, e.g. \`: manifest unknown: manifest unknown\` of
 * \`reading manifest v1 in 127.0.0.1:45401/tests/nope: manifest unknown: …\`.
 * What comes before is the user's name, tag, digest and port, which can
 * spell any word the rules look for. The whole message when it names
 * neither (e.g. a registries.conf mirror was asked instead).
 */
function registryAnswer(detail: string, ref: ImageRef): string {
  const ends = [`${ref.registry}/${ref.repository}`, ref.registry].map((name) => {
    const at = detail.lastIndexOf(name);
    return at < 0 ? -1 : at + name.length;
  });
  const end = Math.max(...ends);
  return end < 0 ? detail : detail.slice(end);
}

/** skopeo's fatal line is `time=… level=fatal msg="…"`: the message, unquoted. */
function skopeoMessage(stderr: string): string {
  const m = /msg="((?:[^"\\]|\\.)*)"/.exec(stderr.slice(stderr.lastIndexOf("level=fatal")));
  const text = m ? m[1].replace(/\\"/g, '"').replace(/\\\\/g, "\\") : stderr.trim();
  return text || "skopeo failed without a message";
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join("***");
  return out;
}
