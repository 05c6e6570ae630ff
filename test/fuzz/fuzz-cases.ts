/**
 * The fuzz test's request generator: every envd route and RPC with malformed
 * paths, bodies, headers and content types, drawn from a seeded PRNG.
 */
import { BAD_BODIES, BAD_PATHS, BAD_VALUES, CONTENT_TYPES, envelope, pick } from "./fuzz-inputs";

/** One request to send. */
export interface Case {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

const UNARY_RPCS = [
  "/process.Process/List",
  "/process.Process/Update",
  "/process.Process/SendInput",
  "/process.Process/SendSignal",
  "/process.Process/CloseStdin",
  "/filesystem.Filesystem/Stat",
  "/filesystem.Filesystem/MakeDir",
  "/filesystem.Filesystem/Move",
  "/filesystem.Filesystem/ListDir",
  "/filesystem.Filesystem/Remove",
  "/filesystem.Filesystem/CreateWatcher",
  "/filesystem.Filesystem/GetWatcherEvents",
  "/filesystem.Filesystem/RemoveWatcher",
] as const;
const STREAM_RPCS = [
  "/process.Process/Start",
  "/process.Process/Connect",
  "/process.Process/StreamInput",
  "/filesystem.Filesystem/WatchDir",
] as const;
const HTTP_ROUTES = [
  "GET /health",
  "GET /metrics",
  "GET /envs",
  "GET /files",
  "POST /files",
  "POST /files/compose",
] as const;

/** A plausible-but-wrong message for `rpc`, built from the bad inputs. */
function message(rand: () => number, rpc: string): unknown {
  const p = () => (rand() < 0.8 ? pick(rand, BAD_PATHS) : pick(rand, BAD_VALUES));
  const v = () => (rand() < 0.5 ? pick(rand, BAD_VALUES) : pick(rand, BAD_PATHS));
  const selector = () =>
    rand() < 0.5 ? { selector: { pid: v() } } : rand() < 0.5 ? { pid: v() } : { tag: v() };
  switch (rpc.split("/")[2]) {
    case "Move":
      return { source: p(), destination: p() };
    case "ListDir":
      return { path: p(), depth: v() };
    case "WatchDir":
    case "CreateWatcher":
      return { path: p(), recursive: v(), includeEntry: v(), allowNetworkMounts: v() };
    case "GetWatcherEvents":
    case "RemoveWatcher":
      return { watcherId: v() };
    case "Start":
      return {
        process: {
          cmd: pick(rand, ["/bin/true", "", "a\0b", "/nonexistent", "/bin/echo", v()]),
          args: rand() < 0.5 ? [String(v()), "x\0y"] : v(),
          envs: rand() < 0.5 ? { "A\0": "1", "=": "b", B: "c\0" } : v(),
          cwd: p(),
        },
        pty: rand() < 0.3 ? { size: { cols: v(), rows: v() } } : undefined,
        stdin: v(),
        tag: v(),
      };
    case "SendInput":
      return { process: selector(), input: { stdin: v(), pty: v() } };
    case "SendSignal":
      return { process: selector(), signal: v() };
    case "Update":
      return { process: selector(), pty: { size: { cols: v(), rows: v() } } };
    default:
      return rand() < 0.5 ? { path: p() } : { process: selector() };
  }
}

function headerNoise(rand: () => number): Record<string, string> {
  const h: Record<string, string> = {};
  if (rand() < 0.3) {
    h.authorization = pick(rand, [
      "Basic " + Buffer.from("nobody:").toString("base64"),
      "Basic !!!",
      "Bearer x",
      "Basic " + Buffer.from("root:").toString("base64"),
      "Basic",
    ]);
  }
  if (rand() < 0.3) h["keepalive-ping-interval"] = pick(rand, ["-1", "abc", "0", "1e9"]);
  if (rand() < 0.2) h["x-metadata-" + pick(rand, ["k", "ok"])] = pick(rand, ["v", ""]);
  if (rand() < 0.1) h["content-encoding"] = pick(rand, ["gzip", "br", "identity"]);
  return h;
}

/** The `i`-th case of the run drawn from `rand`. */
export function buildCase(rand: () => number, i: number): Case {
  const kind = rand();
  const headers = headerNoise(rand);
  if (kind < 0.35) {
    const rpc = pick(rand, UNARY_RPCS);
    const body = rand() < 0.7 ? JSON.stringify(message(rand, rpc)) : pick(rand, BAD_BODIES);
    headers["content-type"] = rand() < 0.85 ? "application/json" : pick(rand, CONTENT_TYPES);
    return { method: "POST", path: rpc, headers, body };
  }
  if (kind < 0.6) {
    const rpc = pick(rand, STREAM_RPCS);
    const json = rand() < 0.7 ? JSON.stringify(message(rand, rpc)) : pick(rand, BAD_BODIES);
    const body = rand() < 0.8 ? envelope(json, rand() < 0.1 ? 0x01 : 0) : json;
    headers["content-type"] =
      rand() < 0.85 ? "application/connect+json" : pick(rand, CONTENT_TYPES);
    // Streams that start processes or watches end by themselves.
    headers["connect-timeout-ms"] = rand() < 0.9 ? "2000" : pick(rand, ["-5", "abc", "0"]);
    return { method: "POST", path: rpc, headers, body };
  }
  const [method, route] = pick(rand, HTTP_ROUTES).split(" ") as [string, string];
  const q = new URLSearchParams();
  if (rand() < 0.9) q.set("path", String(pick(rand, BAD_PATHS)));
  if (rand() < 0.3) q.set("username", pick(rand, ["nobody", "", "root", "a\0"]));
  if (rand() < 0.2) q.set("signature", pick(rand, ["v1_x", "", "v2_"]));
  if (rand() < 0.2) q.set("signature_expiration", pick(rand, ["-1", "abc", "1"]));
  let body: string | Buffer = "";
  if (method === "POST" && route === "/files") {
    headers["content-type"] = pick(rand, CONTENT_TYPES);
    body =
      rand() < 0.5
        ? pick(rand, BAD_BODIES)
        : `--zz\r\nContent-Disposition: form-data; name="file"${
            rand() < 0.5 ? `; filename="${String(pick(rand, BAD_PATHS)).replace(/"/g, "")}"` : ""
          }\r\n\r\ncontent ${i}\r\n--zz--\r\n`;
  } else if (method === "POST") {
    headers["content-type"] = rand() < 0.8 ? "application/json" : pick(rand, CONTENT_TYPES);
    body =
      rand() < 0.6
        ? JSON.stringify({
            source_paths:
              rand() < 0.7
                ? [pick(rand, BAD_PATHS), pick(rand, BAD_PATHS)]
                : pick(rand, BAD_VALUES),
            destination: rand() < 0.8 ? pick(rand, BAD_PATHS) : pick(rand, BAD_VALUES),
            username: rand() < 0.2 ? pick(rand, BAD_VALUES) : undefined,
          })
        : pick(rand, BAD_BODIES);
  } else if (rand() < 0.2) {
    headers.range = pick(rand, [
      "bytes=5-1",
      "bytes=-0",
      "bytes=99999999-",
      "bytes=abc",
      "bytes=0-0",
    ]);
  }
  if (rand() < 0.1) headers["accept-encoding"] = "gzip";
  return { method, path: `${route}?${q.toString()}`, headers, body };
}
