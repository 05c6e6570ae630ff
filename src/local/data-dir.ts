/**
 * The data dir's guards, taken at every start before anything in it changes:
 *
 * - its mode is forced to 0700 and its owner must be the service's user: it
 *   holds the API key, the token secret and every sandbox's and volume's
 *   files (which sandbox root can make setuid), so no other host user may
 *   enter it, even if an earlier version or an operator widened it;
 * - one service per data dir: an exclusive `flock` on `<dataDir>/service.lock`
 *   held for the service's lifetime. The lock belongs to an open file
 *   description of the service's own process, so the kernel releases it when
 *   that process ends, however it ends (`kill -9` included), and a stale pid
 *   file can never block a start. Node has no flock binding: util-linux's
 *   `flock`(1) takes the lock on the service's descriptor, handed to it as
 *   fd 3, and exits; the lock stays with the descriptor.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { SandboxIacError } from "../errors";

const OPERATION = "local.start";
/** The lock file in the data dir; it also holds the holder's pid, for the refusal message. */
const SERVICE_LOCK_FILE = "service.lock";
/** The mode of the data dir. */
const DATA_DIR_MODE = 0o700;
/** `flock --conflict-exit-code`: what `flock`(1) exits with when another holds the lock. */
const LOCK_HELD_EXIT = 75;

/**
 * Creates `dataDir` when missing and forces it to mode 0700, owned by this
 * process's user; refuses to start when that cannot be done. Logs a line when
 * it had to narrow the mode.
 */
export function secureDataDir(dataDir: string, log: (line: string) => void): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  const before = fs.lstatSync(dataDir);
  const uid = process.getuid?.() ?? 0;
  if (!before.isDirectory()) {
    throw new SandboxIacError(
      "invalid_argument",
      `data dir ${dataDir} is ${before.isSymbolicLink() ? "a symlink (its target could be swapped under the service)" : "not a directory"}: give --data-dir a real directory, e.g. the one \`realpath ${dataDir}\` prints`,
      { operation: OPERATION, resourceId: dataDir, field: "dataDir" },
    );
  }
  if (before.uid !== uid) {
    throw new SandboxIacError(
      "permission_denied",
      `data dir ${dataDir} is owned by uid ${before.uid}, not by the service's uid ${uid}: another user could read its API key and reach its sandboxes' files; give --data-dir a directory owned by uid ${uid}, or chown it`,
      { operation: OPERATION, resourceId: dataDir },
    );
  }
  const mode = before.mode & 0o7777;
  if (mode === DATA_DIR_MODE) return;
  try {
    fs.chmodSync(dataDir, DATA_DIR_MODE);
  } catch (err) {
    throw new SandboxIacError(
      "permission_denied",
      `data dir ${dataDir} has mode ${octal(mode)} and could not be set to ${octal(DATA_DIR_MODE)} (${(err as NodeJS.ErrnoException).code ?? String(err)}): other host users could reach its files; fix the mode or pick another --data-dir`,
      { operation: OPERATION, resourceId: dataDir, cause: err },
    );
  }
  log(
    `data dir ${dataDir} had mode ${octal(mode)}: set to ${octal(DATA_DIR_MODE)} (it holds the API key and sandbox files no other host user may reach)`,
  );
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}

/** A held data-dir lock; `release` lets another service start on the dir. */
export interface DataDirLock {
  release(): void;
}

/**
 * Takes the data dir's service lock, or refuses with `conflict` naming the
 * pid of the service that holds it. Changes nothing in the dir but the lock
 * file itself.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, SERVICE_LOCK_FILE);
  const fd = fs.openSync(
    file,
    fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    const res = spawnSync(
      "flock",
      ["--exclusive", "--nonblock", "--conflict-exit-code", String(LOCK_HELD_EXIT), "3"],
      { stdio: ["ignore", "ignore", "pipe", fd] },
    );
    if (res.status === LOCK_HELD_EXIT) {
      const holder = fs.readFileSync(fd, "utf8").trim();
      throw new SandboxIacError(
        "conflict",
        `data dir ${dataDir} is in use by another sandbox-iac service (pid ${/^\d+$/.test(holder) ? holder : "unknown"}): one data dir serves one service; stop that one first, or give this one another --data-dir`,
        { operation: OPERATION, resourceId: dataDir },
      );
    }
    if (res.status !== 0) {
      throw new SandboxIacError(
        "internal",
        `locking data dir ${dataDir} with flock failed (${res.error?.message ?? `exit ${String(res.status ?? res.signal)}`}: ${String(res.stderr ?? "").trim()}); check that util-linux's flock is installed`,
        { operation: OPERATION, resourceId: dataDir, cause: res.error },
      );
    }
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, `${process.pid}\n`, 0);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Closing the last descriptor of the open file description drops the lock.
      fs.closeSync(fd);
    },
  };
}
