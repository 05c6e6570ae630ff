/**
 * What the agent and the service agree on when the service writes a binary
 * `process.Process/StreamInput` straight into a process's stdin pipe instead
 * of relaying it to the agent (`src/local/proxy/direct-stdin.ts`): the
 * agent's answer to `AGENT_INTERNAL_ROUTES.stdinPipe` (envd.ts). Both serve
 * the call itself the same way (stdin-stream-serve.ts).
 *
 * Why: relaying an archive through the agent cost the agent as much CPU as
 * the service spent relaying it (about 0.1 s per 44 MiB), on a path where
 * the machine's two cores are the limit (bench/provisioner.js).
 *
 * @module
 */
/**
 * The agent's answer to the stdin-pipe route: the number of its own
 * descriptor of the process's stdin pipe, and that pipe's inode, which the
 * service checks against the descriptor it opens (the agent is the
 * sandbox's, so the number is only a hint).
 */
export interface StdinPipeAnswer {
  fd: number;
  ino: number;
}

/**
 * `json` as a {@link StdinPipeAnswer}, or undefined when it is not one (an
 * agent's answer is the sandbox's: anything may come). Checked by hand, not
 * by zod, which the agent's bundle does not carry.
 */
export function stdinPipeAnswerOf(json: unknown): StdinPipeAnswer | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const { fd, ino } = json as Record<string, unknown>;
  const whole = (n: unknown, max: number): n is number =>
    typeof n === "number" && Number.isSafeInteger(n) && n >= 0 && n <= max;
  return whole(fd, 0x7fffffff) && whole(ino, Number.MAX_SAFE_INTEGER) ? { fd, ino } : undefined;
}
