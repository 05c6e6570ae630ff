/**
 * The official SDK versions the conformance suite drives, pinned in
 * package.json: the current line (2.51, `POST /v2/sandboxes`, v2 connect) and
 * the 2.45 line (`POST /sandboxes`, v1 connect, client-side API-key check).
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import type * as E2B from "e2b";

/** One SDK under test. */
export interface SdkTarget {
  label: string;
  sdk: typeof E2B;
}

export const SDK_TARGETS: SdkTarget[] = [
  { label: "e2b@2.51.0", sdk: require("e2b") as typeof E2B },
  { label: "e2b@2.45.0", sdk: require("e2b-2-45") as typeof E2B },
];
