/**
 * How clients address the service: the domain behind `api.<domain>` and
 * `<port>-<sandboxID>.<domain>`, and whether the port speaks TLS. E2B's SDK
 * derives every URL from `E2B_DOMAIN` (`https://api.<domain>`,
 * `https://<port>-<sandboxID>.<domain>`, `getHost(port)`), so the service
 * answers to the same shape: over TLS with a certificate for `*.<domain>`, or
 * over plain HTTP with `localhost:<port>` for `getHost` on this machine.
 *
 * @module
 */
import { X509Certificate } from "node:crypto";
import type { ServerOptions } from "node:https";
import { createSecureContext } from "node:tls";
import { SandboxIacError, invalidArgument } from "../errors";

const OPERATION = "local.start";

/** The certificate and key a TLS service presents (PEM text). */
export interface TlsMaterial {
  /** The certificate chain, leaf first, e.g. with `DNS:*.sandboxes.example.com` among its names. */
  cert: string;
  /** The certificate's private key. */
  key: string;
}

/** What {@link resolveAddressing} settles. */
export interface Addressing {
  /** `host[:port]` clients put under `api.` and `<port>-<sandboxID>.` (`E2B_DOMAIN`). */
  domain: string;
  /** `https` with TLS, else `http`. */
  scheme: "http" | "https";
}

/** A domain as `E2B_DOMAIN` takes it: host name labels, an optional `:port`. */
const DOMAIN_PATTERN =
  /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$/;

/**
 * The service's domain and scheme. The domain is `domain` when given; with
 * TLS, else the one wildcard name of the certificate (`*.example.com` gives
 * `example.com`), followed by `:<port>` unless the port is 443; without TLS,
 * else `localhost:<port>` (browsers and curl resolve `*.localhost` to
 * loopback themselves, glibc only with nss-myhostname or systemd-resolved).
 *
 * @param port - the port the service listens on (after a `0` was resolved)
 * @throws SandboxIacError `invalid_argument` for a malformed domain, a
 *   certificate that cannot be read, or one with no single wildcard name when
 *   no domain is given
 */
export function resolveAddressing(
  tls: TlsMaterial | undefined,
  domain: string | undefined,
  port: number,
): Addressing {
  const scheme = tls ? "https" : "http";
  if (domain !== undefined) return { domain: checkedDomain(domain), scheme };
  if (!tls) return { domain: `localhost:${port}`, scheme };
  const wildcards = wildcardNames(tls.cert);
  if (wildcards.length !== 1)
    throw new SandboxIacError(
      "invalid_argument",
      `domain (--domain) is needed: the TLS certificate's wildcard names are ${wildcards.length > 0 ? wildcards.join(", ") : "none"}, ` +
        "so the domain cannot be taken from it; pass the domain its *.<domain> name covers, e.g. --domain sandboxes.example.com",
      { operation: OPERATION, field: "domain" },
    );
  const base = wildcards[0].slice(2);
  return { domain: port === 443 ? base : `${base}:${port}`, scheme };
}

/** The base URL of the control API at `domain`: `<scheme>://api.<domain>`. */
export function apiUrlOf(addressing: Addressing): string {
  return `${addressing.scheme}://api.${addressing.domain}`;
}

/**
 * The TLS options of `https.createServer` for `material`.
 *
 * @throws SandboxIacError `invalid_argument` when the pair cannot be used (not
 *   PEM, or a key that is not the certificate's), before anything listens
 */
export function tlsServerOptions(material: TlsMaterial): ServerOptions {
  const options = { cert: material.cert, key: material.key };
  try {
    createSecureContext(options);
  } catch (err) {
    throw new SandboxIacError(
      "invalid_argument",
      `the TLS certificate and key (--tls-cert, --tls-key) cannot be used together: ${err instanceof Error ? err.message : String(err)}; pass the PEM certificate and the private key that belongs to it`,
      { operation: OPERATION, field: "tls", cause: err },
    );
  }
  return options;
}

function checkedDomain(value: string): string {
  const domain = value.trim().toLowerCase();
  if (!DOMAIN_PATTERN.test(domain))
    throw invalidArgument(
      OPERATION,
      "domain (--domain)",
      value,
      "a host name with an optional :port, without scheme or path, e.g. sandboxes.example.com",
      "pass the name under which api.<domain> and *.<domain> reach this service",
    );
  return domain;
}

/** The `DNS:*.…` names of the leaf certificate of `pem`, lower-cased. */
function wildcardNames(pem: string): string[] {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch (err) {
    throw new SandboxIacError(
      "invalid_argument",
      `the TLS certificate (--tls-cert) is not a PEM certificate (-----BEGIN CERTIFICATE-----): ${err instanceof Error ? err.message : String(err)}; pass the certificate file, leaf first`,
      { operation: OPERATION, field: "tls.cert", cause: err },
    );
  }
  return (cert.subjectAltName ?? "")
    .split(/,\s*/)
    .filter((n) => n.startsWith("DNS:*."))
    .map((n) => n.slice(4).toLowerCase());
}
