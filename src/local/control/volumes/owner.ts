/**
 * Who owns a volume's content by default: the sandbox's `user`, so that a
 * mounted volume is writable by the default user inside.
 *
 * @module
 */
import { SANDBOX_USER } from "../../runtime/constants";

/** The uid and gid new volume entries get when the request names none. */
export const SANDBOX_USER_IDS = { uid: SANDBOX_USER.uid, gid: SANDBOX_USER.gid } as const;
