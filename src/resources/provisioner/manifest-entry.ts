/**
 * The entries of a Provisioner manifest (manifest.ts): a file to have in the
 * sandbox and a directory to create. Their own file so that what handles an
 * entry (deferred-hashes.ts, the archive's packer) does not import the
 * listing that makes them.
 *
 * @module
 */

/** One file to have in the sandbox. */
export interface ManifestEntry {
  /** Absolute local path. */
  localPath: string;
  /** Absolute or home-relative path in the sandbox. */
  remotePath: string;
  /** Bytes. */
  size: number;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
  /** Owner in the sandbox; undefined means the default user. */
  user?: string | undefined;
}

/** Directory entries to create even when empty. */
export interface ManifestDir {
  remotePath: string;
  mode: number;
  user?: string | undefined;
}
