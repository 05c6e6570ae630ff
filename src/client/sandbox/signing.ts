/**
 * Signed `/files` URLs: links that read or write one file without the access
 * token, e.g. for a browser or curl. Reference: docs/envd.md#authentication-users-and-headers.
 *
 * @module
 */
import { invalidArgument } from "../../errors";
import { ENVD_ROUTES, FILES_QUERY } from "../../wire/envd";
import { filesSignature } from "../../wire/files-signature";
import { OPS } from "./constants";
import { effectiveUser, type SandboxContext } from "./context";
import { routeUrl } from "./http";
import { checkExpiresIn, checkPath, checkUser } from "./validate";

/** What a signed URL allows: `read` for GET, `write` for POST. */
export type FileOperation = "read" | "write";

/** Inputs of {@link fileSignature}. */
export interface SignatureInput {
  /** The raw `path` query value, exactly as it will be sent. */
  path: string;
  /** `read` or `write`. */
  operation: FileOperation;
  /** The `username` query value; "" when none is sent. */
  user: string;
  /** The sandbox's access token. */
  accessToken: string;
  /** Unix seconds after which the signature is refused. @default none: the signature never expires */
  expirationUnix?: number | undefined;
}

/**
 * `"v1_" + base64_nopad(sha256("<path>:<op>:<user>:<token>[:<exp>]"))`.
 * The result is a credential: never log it.
 */
export function fileSignature(input: SignatureInput): string {
  return filesSignature({ ...input, expiration: input.expirationUnix });
}

/** Options of signed URLs. */
export interface SignedUrlOptions {
  /** The user the URL acts as. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** Seconds from now until the URL stops working. @default never expires */
  expiresInSeconds?: number;
  /** The clock, in Unix milliseconds; for tests. @default Date.now */
  now?: () => number;
}

/** The signed-URL part of the sandbox client. */
export interface SigningApi {
  /** A URL that GETs `path`. Signed when the client has an access token; no request is made. */
  downloadUrl(path: string, options?: SignedUrlOptions): string;
  /** A URL that accepts a POST of `path` (multipart field `file` or octet-stream). */
  uploadUrl(path: string, options?: SignedUrlOptions): string;
}

/** Builds the signed-URL part over a shared context. */
export function createSigningApi(ctx: SandboxContext): SigningApi {
  function url(path: string, operation: FileOperation, options: SignedUrlOptions): string {
    const op = OPS.filesSignUrl;
    checkPath(op, "path", path);
    const user = effectiveUser(ctx, checkUser(op, options.user));
    const expiresIn = checkExpiresIn(op, options.expiresInSeconds);
    const query: Record<string, string | undefined> = {
      [FILES_QUERY.path]: path,
      [FILES_QUERY.username]: user,
    };
    if (ctx.accessToken) {
      const expirationUnix =
        expiresIn === undefined
          ? undefined
          : Math.floor((options.now ?? Date.now)() / 1000) + expiresIn;
      query[FILES_QUERY.signature] = fileSignature({
        path,
        operation,
        user: user ?? "",
        accessToken: ctx.accessToken,
        expirationUnix,
      });
      if (expirationUnix !== undefined)
        query[FILES_QUERY.signatureExpiration] = String(expirationUnix);
    } else if (expiresIn !== undefined) {
      throw invalidArgument(
        op,
        "expiresInSeconds",
        expiresIn,
        "left out for a sandbox without an access token",
        "only secure sandboxes can sign URLs; create the sandbox with secure: true",
      );
    }
    return routeUrl(ctx.baseUrl, ENVD_ROUTES.files, query);
  }

  return {
    downloadUrl: (path, options = {}) => url(path, "read", options),
    uploadUrl: (path, options = {}) => url(path, "write", options),
  };
}
