/** minipass-fetch ships no types: its `Headers` implements the Fetch standard's (src/agent/fetch-headers.ts). */
declare module "minipass-fetch/lib/headers.js" {
  const Headers: typeof globalThis.Headers;
  export = Headers;
}
