/**
 * Paging over `X-Next-Token`: one page at a time, or every item through an
 * async iterator.
 *
 * @module
 */

import { SandboxIacError } from "../../errors";
import { CONTROL_HEADERS } from "../../wire/control";
import type { Page } from "./types";

/** The cursor of the next page, or undefined when this was the last one. */
export function nextTokenOf(response: Response): string | undefined {
  const token = response.headers.get(CONTROL_HEADERS.nextToken);
  return token === null || token === "" ? undefined : token;
}

/**
 * Yields every item of every page, starting at `firstToken`. Fetches a page
 * only when the previous one is consumed.
 */
export async function* paginate<T>(
  operation: string,
  fetchPage: (nextToken: string | undefined) => Promise<Page<T>>,
  firstToken?: string,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  let token = firstToken;
  for (;;) {
    const page = await fetchPage(token);
    yield* page.items;
    if (page.nextToken === undefined) return;
    // A cursor that comes back would page forever.
    if (seen.has(page.nextToken)) {
      throw new SandboxIacError(
        "contract_violation",
        `the service repeated the page cursor ${JSON.stringify(page.nextToken)}; ${CONTROL_HEADERS.nextToken} must advance`,
        { operation },
      );
    }
    seen.add(page.nextToken);
    token = page.nextToken;
  }
}
