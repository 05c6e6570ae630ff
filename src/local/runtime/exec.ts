/**
 * Runs short host commands (`cp`, `du`, `umount`) for the runtime.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { SandboxIacError } from "../../errors";

/** Output of a finished host command. */
export interface ExecResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs `file` with `args` (no shell) and resolves with its output; rejects
 * with an `internal` {@link SandboxIacError} naming the command and its stderr
 * when it cannot start or exits non-zero.
 */
export function execHost(
  operation: string,
  file: string,
  args: readonly string[],
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const detail = String(stderr).trim().slice(-2000) || err.message;
        reject(
          new SandboxIacError(
            "internal",
            `host command ${file} ${args.join(" ")} failed: ${detail}`,
            {
              operation,
              cause: err,
            },
          ),
        );
        return;
      }
      resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}
