/** normalRemotePath() gives what posix.normalize gives, for normal paths and the others. */
import * as posix from "node:path/posix";
import { normalRemotePath } from "./remote-path";

describe("normalRemotePath()", () => {
  it("answers as posix.normalize for normal paths and for those with empty, . or .. components", () => {
    const paths = [
      "/home/user/tree/dir000/file00000.dat",
      "relative/file.txt",
      "/",
      "",
      ".",
      "..",
      "./a",
      "a/.",
      "a/..",
      "../a",
      "/home//user/x",
      "//x",
      "/home/user/./x",
      "/home/user/../root/x",
      "a/b/",
      "a/.hidden/..dots/...",
      ".a/..b",
    ];
    for (const p of paths)
      expect({ p, normal: normalRemotePath(p) }).toEqual({ p, normal: posix.normalize(p) });
  });
});
