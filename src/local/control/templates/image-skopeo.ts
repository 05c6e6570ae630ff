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
  throw classify(scrub(skopeoMessage(stderr), opts.secrets), opts.ref);
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

function classify(detail: string, ref: ImageRef): ImagePullError {
  if (/unauthorized|authentication required|invalid username\/password|denied|401/i.test(detail)) {
    return new ImagePullError(
      "auth",
      `authentication to registry ${ref.registry} failed for image ${ref.full}: ${detail}: check the username and password of fromImage(ref, { username, password }), or run \`docker login ${ref.registry}\` on the service's host`,
    );
  }
  if (
    /no image found in (?:manifest list|image index) for architecture|choosing (?:an )?image/i.test(
      detail,
    )
  ) {
    return new ImagePullError(
      "platform",
      `image ${ref.full} has no ${PLATFORM.os}/${PLATFORM.architecture} variant: ${detail}: the local service runs ${PLATFORM.os}/${PLATFORM.architecture} images only`,
    );
  }
  if (/manifest unknown|name unknown|not found|404/i.test(detail)) {
    return new ImagePullError(
      "not_found",
      `image ${ref.full} does not exist in registry ${ref.registry}: ${detail}: check the name and tag`,
    );
  }
  if (/server gave HTTP response to HTTPS client/i.test(detail)) {
    return new ImagePullError(
      "unreachable",
      `registry ${ref.registry} speaks plain HTTP: ${detail}: start the service with --insecure-registry ${ref.registry} to allow it`,
    );
  }
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
  return new ImagePullError("other", `pulling ${ref.full} failed: ${detail}`);
}
