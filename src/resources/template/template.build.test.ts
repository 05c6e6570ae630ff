import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { templateArgsSchema } from "./template.args";
import { resolveCopySource, spoolCopyArchive } from "./template.files";
import { templateLifecycle } from "./template.lifecycle";
import { makeProgramDir, templateInputs as inputs } from "../../../test/support/template-program";
import { resolveCopies, toWireBuild } from "./template.steps";

let dir: string;
beforeEach(() => (dir = makeProgramDir()));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("build request", () => {
  it("matches the official SDK's steps and files hashes byte for byte", async () => {
    const i = inputs({
      build: { ...inputs().build, startCmd: "sleep infinity", readyCmd: "true" },
    });
    const ours = toWireBuild(i, resolveCopies(i, dir));
    // The SDK is ESM-only inside (chalk), which jest cannot load: run it in plain node.
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(dir)} })
        .fromTemplate("base")
        .copy("files", "/app", { user: "root", mode: 0o755 })
        .runCmd(["apt-get update", "apt-get install -y jq"], { user: "root" })
        .setEnvs({ A: "1", B: "two" })
        .setWorkdir("/app")
        .setUser("user")
        .setStartCmd("sleep infinity", "true");
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(ours).toEqual(JSON.parse(sdk));
  });

  it("turns a Dockerfile into the SDK's fromDockerfile body, globs and .dockerignore hashed as the SDK hashes them", async () => {
    // GIVEN a build context with a .dockerignore, and a Dockerfile using every instruction the SDK maps
    const ctx = path.join(dir, "ctx");
    mkdirSync(path.join(ctx, "src", "lib"), { recursive: true });
    writeFileSync(path.join(ctx, "src", "main.py"), "print('hi')\n");
    writeFileSync(path.join(ctx, "src", "util.py"), "x = 1\n");
    writeFileSync(path.join(ctx, "src", "notes.txt"), "kept\n");
    writeFileSync(path.join(ctx, "src", "lib", "deep.py"), "y = 2\n");
    writeFileSync(path.join(ctx, "src", "secret.env"), "ignored\n");
    mkdirSync(path.join(ctx, "src", "__pycache__"));
    writeFileSync(path.join(ctx, "src", "__pycache__", "main.pyc"), "ignored\n");
    writeFileSync(path.join(ctx, "requirements.txt"), "requests\n");
    // The SDK reads it as glob ignore patterns (not Docker's rules): a directory's
    // content needs `/**`, and a pattern is relative to the context.
    writeFileSync(
      path.join(ctx, ".dockerignore"),
      "# build junk\n**/__pycache__/**\n\nsrc/*.env\n",
    );
    const dockerfile = [
      "FROM python:3.12-slim",
      "ARG VERSION=1.0",
      "ARG EMPTY",
      "ENV APP_HOME=/app MODE=prod",
      "ENV LEGACY value",
      "LABEL maintainer=me",
      "RUN apt-get update && \\",
      "    apt-get install -y jq",
      "COPY --chown=user:user requirements.txt src/*.py /app/",
      "ADD src /app/src",
      "WORKDIR /app",
      "EXPOSE 8080",
      'CMD ["python", "main.py"]',
      "",
    ].join("\n");
    const i = templateArgsSchema.parse({
      name: "from-dockerfile",
      build: {
        dockerfile,
        context: "ctx",
        fromImageRegistry: { username: "me", password: "pw" },
        skipCache: true,
      },
    });
    // WHEN both build bodies are made
    const ours = toWireBuild(i, resolveCopies(i, dir));
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(ctx)} }).fromDockerfile(${JSON.stringify(dockerfile)});
      t.registryConfig = { type: "registry", username: "me", password: "pw" };
      t.force = true; // what Template.build(t, { skipCache: true }) sets
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    // THEN they are the same, hashes included, and the ignored files are not in any hash
    expect(ours).toEqual(JSON.parse(sdk));
    expect(ours.steps?.filter((s) => s.type === "COPY").map((s) => s.args?.[0])).toEqual([
      "requirements.txt",
      "src/*.py",
      "src",
    ]);
    const before = ours.steps?.map((s) => s.filesHash);
    writeFileSync(path.join(ctx, "src", "secret.env"), "changed but ignored\n");
    writeFileSync(path.join(ctx, "src", "__pycache__", "main.pyc"), "changed but ignored\n");
    expect(toWireBuild(i, resolveCopies(i, dir)).steps?.map((s) => s.filesHash)).toEqual(before);
  });

  it("sends several sources as one COPY each and a step's force, as the SDK's copy([...]) after skipCache()", async () => {
    const i = templateArgsSchema.parse({
      name: "t",
      build: {
        fromImage: "alpine:3",
        steps: [
          { run: "true" },
          { copy: { sources: ["files/a.txt", "files/sub/*.sh"], dest: "/app/" }, force: true },
        ],
      },
    });
    const ours = toWireBuild(i, resolveCopies(i, dir));
    const script = `
      const { Template } = require("e2b");
      const t = Template({ fileContextPath: ${JSON.stringify(dir)} })
        .fromImage("alpine:3")
        .runCmd("true")
        .skipCache()
        .copy(["files/a.txt", "files/sub/*.sh"], "/app/");
      Template.toJSON(t).then((json) => process.stdout.write(json));`;
    const sdk = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(ours).toEqual(JSON.parse(sdk));
  });

  it("fails check for a multi-stage Dockerfile, as the SDK refuses it", () => {
    const result = templateLifecycle.check({
      name: "t",
      build: { dockerfile: "FROM a AS build\nRUN make\nFROM b\n" },
    });
    expect(result.failures).toEqual([
      {
        property: "build.dockerfile",
        reason: expect.stringMatching(/multi-stage Dockerfile \(2 FROM instructions\)/),
      },
    ]);
  });

  it("never shows the registry password in a check failure", () => {
    const result = templateLifecycle.check({
      name: "t",
      build: {
        fromTemplate: "base",
        fromImageRegistry: { username: "me", password: "pw-5f1e-never-shown" },
      },
    });
    expect(result.failures.map((f) => f.property)).toEqual(["build.fromImageRegistry"]);
    expect(JSON.stringify(result.failures)).not.toContain("pw-5f1e-never-shown");
  });

  it("archives a source outside the program directory from its parent", () => {
    const outside = path.join(dir, "files", "sub");
    expect(resolveCopySource(outside, path.join(dir, "program"))).toEqual({
      contextDir: path.join(dir, "files"),
      src: "sub",
      ignore: [],
    });
    expect(resolveCopySource("files/sub", dir)).toEqual({
      contextDir: dir,
      src: "files/sub",
      ignore: [],
    });
  });

  it("spools a gzipped tar holding the source's files with relative paths", async () => {
    const archive = await spoolCopyArchive(resolveCopySource("files", dir));
    try {
      const listing = execFileSync("tar", ["-tzf", archive.path], { encoding: "utf8" })
        .trim()
        .split("\n")
        .sort();
      expect(listing).toEqual([
        "files/",
        "files/.hidden",
        "files/a.txt",
        "files/link",
        "files/sub/",
        "files/sub/b.sh",
      ]);
    } finally {
      await archive.cleanup();
    }
  });
});
