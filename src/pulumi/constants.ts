/**
 * Names used by the Pulumi adapter: stack-config keys, the preview sentinel,
 * and the resource type tokens.
 *
 * @module
 */

/** The config namespace of this provider (`sandbox-iac:apiKey`, ...). */
const CONFIG_NAMESPACE = "sandbox-iac";

/** Stack-config keys read by `configure()`; all optional (environment variables are the fallback). */
export const CONFIG_KEYS = {
  /** Secret: the API key. */
  apiKey: `${CONFIG_NAMESPACE}:apiKey`,
  apiUrl: `${CONFIG_NAMESPACE}:apiUrl`,
  sandboxUrl: `${CONFIG_NAMESPACE}:sandboxUrl`,
  domain: `${CONFIG_NAMESPACE}:domain`,
} as const;

/** The value Pulumi passes, during preview, for inputs not known yet. */
export const UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The dynamic-resource module of every type token: `pulumi-nodejs:dynamic/sandbox-iac:<Type>`. */
export const TYPE_MODULE = CONFIG_NAMESPACE;
