/**
 * Constant-time comparison of the secrets both HTTP interfaces check: API
 * keys, access tokens, volume tokens, upload grants and URL signatures.
 *
 * @module
 */
import { timingSafeEqual } from "node:crypto";

/** True when `a` equals `b`, in time that depends on neither where they differ nor, much, on their lengths. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) {
    // Still spend a comparison, so a length mismatch answers no faster than a content one.
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}
