/**
 * E2B's `network.rules`: per-domain transforms of a sandbox's outbound HTTP
 * and HTTPS requests, as the SDK 2.51 type docs (`SandboxNetworkRule`) and
 * E2B's `spec/openapi.yml` (`SandboxNetworkConfig.rules`) define them. Keys
 * are domain entries (see egress-domains.ts: exact or one leading wildcard,
 * lower-cased on write; the exact key wins, then the longest wildcard, and
 * rule lists are not merged); each rule's `transform.headers` sets headers,
 * replacing one of the same name. A header value may name a stored secret
 * as `${e2b.secrets.NAME}` (the SDK's `Secret.fill(NAME)`), resolved to the
 * secret's current value by the service for each request.
 *
 * @module
 */
import { SECRET_NAME_PATTERN } from "./ids";

/** One transform rule: `{ transform: { headers } }`. */
export interface NetworkRule {
  transform?: { headers?: Record<string, string> } | undefined;
}

/** `network.rules`: domain entry (lower-cased) to its ordered rules. */
export type NetworkRules = Record<string, NetworkRule[]>;

/** Most keys in `network.rules`, rules per key, and headers per transform. */
export const RULE_LIMITS = { keys: 64, rulesPerKey: 16, headersPerRule: 32, valueBytes: 8192 };

/** `${e2b.secrets.NAME}` anywhere in a header value (NAME checked on write). */
const SECRET_PLACEHOLDER = /\$\{e2b\.secrets\.([^}]*)\}/g;
/** Any `${e2b.…}` placeholder: those other than secrets (IAM tokens) are not served here. */
const ANY_PLACEHOLDER = /\$\{e2b\.[^}]*\}/g;
/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers a transform may not set: they frame the request or name its destination. */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
]);

/** What is wrong with a header of a transform (undefined: nothing). */
export function headerProblem(name: string, value: string): string | undefined {
  if (!HEADER_NAME.test(name)) return `header name ${JSON.stringify(name)} is not an HTTP token`;
  if (FORBIDDEN_HEADERS.has(name.toLowerCase()))
    return `header ${JSON.stringify(name)} frames the request or names its destination and cannot be set by a rule`;
  // Control characters (CR, LF, NUL) would split or end the header: request smuggling.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value))
    return `the value of header ${JSON.stringify(name)} holds a control character`;
  if (Buffer.byteLength(value) > RULE_LIMITS.valueBytes)
    return `the value of header ${JSON.stringify(name)} is longer than ${RULE_LIMITS.valueBytes} bytes`;
  for (const m of value.matchAll(ANY_PLACEHOLDER)) {
    const secret = /^\$\{e2b\.secrets\.(.*)\}$/.exec(m[0]);
    if (!secret)
      return `placeholder ${m[0]} is not supported by the local service: only \${e2b.secrets.NAME} (Secret.fill) is`;
    if (!SECRET_NAME_PATTERN.test(secret[1]))
      return `placeholder ${m[0]} does not name a secret: secret names are 1 to 128 letters, digits, "_" or "-"`;
  }
  return undefined;
}

/** The secret names a header value refers to, in order. */
function secretNamesIn(value: string): string[] {
  return [...value.matchAll(SECRET_PLACEHOLDER)].map((m) => m[1]);
}

/**
 * `value` with each `${e2b.secrets.NAME}` replaced by `lookup(NAME)`; the
 * first name `lookup` does not know, when one does not resolve.
 */
export function fillSecrets(
  value: string,
  lookup: (name: string) => string | undefined,
): { value: string } | { unknown: string } {
  const values = new Map<string, string>();
  for (const name of secretNamesIn(value)) {
    if (values.has(name)) continue;
    const found = lookup(name);
    if (found === undefined) return { unknown: name };
    values.set(name, found);
  }
  return { value: value.replace(SECRET_PLACEHOLDER, (_m, name: string) => values.get(name) ?? "") };
}
