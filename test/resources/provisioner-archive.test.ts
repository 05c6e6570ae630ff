/**
 * The Provisioner's archive path (many small files as one tar extracted in
 * the sandbox) against the real local service: it is chosen above the
 * threshold and leaves exactly what the file-by-file path leaves.
 */
import { chmodSync, mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { SandboxClient } from "../../src/client/sandbox";
import { provisionerLifecycle, type ProvisionerArgs } from "../../src/resources/provisioner";
import { ARCHIVE_MAX_FILE_BYTES, ARCHIVE_MIN_FILES } from "../../src/resources/provisioner/archive";
import { EarlyArchive } from "../../src/resources/provisioner/early-archive";
import { buildManifest, digestOf } from "../../src/resources/provisioner/manifest";
import type { FileSpec } from "../../src/resources/provisioner/provisioner.args";
import { syncFiles } from "../../src/resources/provisioner/sync";
import { SandboxIacError } from "../../src/errors";
import { eventually } from "../support/eventually";
import { provisionerFixture } from "./support";

jest.setTimeout(180_000);

const fx = provisionerFixture("prov-archive-files-", { ownCacheDir: true });
const { context, ownSandbox } = fx;

/** More files than the threshold, in nested directories, with a few modes and an empty directory. */
function manyFiles(name: string): string {
  const root = path.join(fx.work, name);
  const count = ARCHIVE_MIN_FILES + 20;
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, `d${i % 7}`, i % 2 ? "deep" : "");
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `f${i}.txt`);
    writeFileSync(file, `file ${i}\n`.repeat(1 + (i % 5)));
    if (i % 11 === 0) chmodSync(file, 0o755);
    if (i % 13 === 0) chmodSync(file, 0o600);
  }
  writeFileSync(path.join(root, "name with 'quote' and spaces.txt"), "odd name\n");
  mkdirSync(path.join(root, "private"), { mode: 0o700 });
  writeFileSync(path.join(root, "private", "secret.txt"), "s\n");
  mkdirSync(path.join(root, "empty"));
  chmodSync(path.join(root, "empty"), 0o750);
  return root;
}

/** Every entry under `dir` in the sandbox: path, type, mode, owner, group, size, and file hashes. */
async function listing(sandbox: SandboxClient, dir: string): Promise<string> {
  const r = await sandbox.run(
    `cd ${dir} && find . -mindepth 1 -printf '%p %y %m %u %g %s\\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum`,
  );
  return r.stdout;
}

/**
 * Expects exactly `files` under `dir` in the sandbox: each file's path and
 * mode, and its content (sha256), as `find` and `sha256sum` list them there.
 */
async function expectFilesIn(
  sandbox: SandboxClient,
  dir: string,
  files: readonly { remotePath: string; mode: number; sha256: string }[],
): Promise<void> {
  const remote = await sandbox.run(
    `cd ${dir} && export LC_ALL=C && find . -type f -printf '%P %m\\n' | sort && find . -type f -printf '%P\\0' | sort -z | xargs -0 sha256sum`,
  );
  const local = files.map((f) => ({ ...f, rel: path.posix.relative(dir, f.remotePath) }));
  const modes = local.map((f) => `${f.rel} ${f.mode.toString(8)}`).sort();
  const sums = local
    .sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
    .map((f) => `${f.sha256}  ${f.rel}`);
  expect(remote.stdout).toBe([...modes, ...sums, ""].join("\n"));
}

/**
 * Expects a run's stored digest to be that of `specs` as they are now, and
 * their files under `dir` in the sandbox with their contents and modes.
 */
async function expectProvisioned(
  sandbox: SandboxClient,
  specs: readonly FileSpec[],
  fileDigest: unknown,
  dir: string,
): Promise<void> {
  const expected = await buildManifest(specs, fx.work);
  expect(fileDigest).toEqual(digestOf(expected));
  await expectFilesIn(sandbox, dir, expected.files);
}

/** The `tar` processes running in the sandbox, a /proc path per line ("" when there is none). */
async function tarsIn(sandbox: SandboxClient): Promise<string> {
  return (await sandbox.run("grep -lx tar /proc/[0-9]*/comm || true")).stdout;
}

describe("Provisioner archive path", () => {
  it("sends many small files as one archive, leaving the same files, modes and owners as file by file", async () => {
    // GIVEN a tree above the archive threshold and a running sandbox
    const root = manyFiles("many");
    const sandbox = await ownSandbox();
    const inputs: ProvisionerArgs = {
      sandboxID: sandbox.sandboxID,
      files: [
        { source: root, destination: "/home/user/archived" },
        // A home-relative destination travels in the same kind of archive.
        { source: root, destination: "relative/archived" },
      ],
    };

    // WHEN provisioned THEN the archive path was taken
    const { ctx, lines } = context();
    const created = await provisionerLifecycle.create(inputs, ctx);
    expect(lines.some((l) => /uploading \d+\+? files in one archive/.test(l))).toBe(true);

    // AND the same tree sent file by file gives an identical listing
    const manifest = await buildManifest(
      [{ source: root, destination: "/home/user/single" }],
      fx.work,
    );
    const perFile: string[] = [];
    await syncFiles(sandbox, manifest.dirs, manifest.files, {
      concurrency: 8,
      partSizeBytes: undefined,
      archiveMinFiles: Number.POSITIVE_INFINITY,
      log: (l) => perFile.push(l),
    });
    expect(perFile.some((l) => l.includes("archive"))).toBe(false);
    const single = await listing(sandbox, "/home/user/single");
    expect(single).toContain("./private d 700 user user");
    expect(single).toContain("./empty d 750 user user");
    expect(single).toMatch(/\.\/d4\/deep\/f11\.txt f 755 user user/);
    expect(single).toMatch(/\.\/d6\/deep\/f13\.txt f 600 user user/);
    expect(await listing(sandbox, "/home/user/archived")).toBe(single);
    expect(await listing(sandbox, "/home/user/relative/archived")).toBe(single);
    expect(created.outputs.bytesUploaded).toBe(2 * manifest.files.reduce((n, f) => n + f.size, 0));
    // No archive is left behind in the home directory.
    expect((await sandbox.run("ls -A /home/user")).stdout.split("\n").sort()).toEqual(
      ["", "archived", "relative", "single"].sort(),
    );

    // WHEN a file is removed locally and another edited, THEN an update follows
    unlinkSync(path.join(root, "d0", "f0.txt"));
    writeFileSync(path.join(root, "d1", "deep", "f1.txt"), "edited\n");
    const updated = await provisionerLifecycle.update(
      created.id,
      created.outputs,
      { ...inputs, files: [inputs.files![0]] },
      context().ctx,
    );
    expect(updated.bytesUploaded).toBe("edited\n".length);
    const after = await sandbox.run(
      "test -e /home/user/archived/d0/f0.txt; echo $?; cat /home/user/archived/d1/deep/f1.txt; test -e /home/user/relative/archived/d2/f2.txt; echo $?",
    );
    expect(after.stdout).toBe("1\nedited\n1\n");
  });

  it("records the hashes of the bytes a first provision sent; one broken off mid-archive is finished by a retry", async () => {
    // GIVEN a tree above the threshold, its manifest, and a running sandbox
    const root = manyFiles("first");
    const specs = [{ source: root, destination: "/home/user/first" }];
    const manifest = await buildManifest(specs, fx.work);
    const sandbox = await ownSandbox();
    const inputs: ProvisionerArgs = { sandboxID: sandbox.sandboxID, files: specs };

    // WHEN a file the archive would pack last disappears once the archive started
    const victim = manifest.files[manifest.files.length - 1];
    const failed = await provisionerLifecycle
      .create(
        inputs,
        context((line) => {
          if (/uploading \d+\+? files in one archive/.test(line)) unlinkSync(victim.localPath);
        }).ctx,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // THEN that run fails, naming the file, and leaves no tar running in the sandbox
    expect(String((failed as Error).message)).toContain(victim.localPath);
    expect(await tarsIn(sandbox)).toBe("");

    // WHEN it is back and the run is retried
    writeFileSync(victim.localPath, `file ${manifest.files.length - 1}\n`);
    const { outputs } = await provisionerLifecycle.create(inputs, context().ctx);

    // THEN every file is in the sandbox with its content and mode, and the
    // stored hashes (taken from the bytes sent) are the files' own
    await expectProvisioned(sandbox, specs, outputs.fileDigest, "/home/user/first");
  });

  it("starts the archive while the files are still listed, a later spec's file winning over an earlier one's", async () => {
    // GIVEN a tree above the threshold and a later spec of one user and root
    // that puts other content at one of its paths
    const root = manyFiles("early");
    const later = path.join(fx.work, "later.txt");
    writeFileSync(later, "the later spec's content\n");
    const sandbox = await ownSandbox();
    const specs = [
      { source: root, destination: "/home/user/early" },
      { source: later, destination: "/home/user/early/d0/f0.txt" },
    ];
    const inputs: ProvisionerArgs = { sandboxID: sandbox.sandboxID, files: specs };

    // WHEN provisioned
    const { ctx, lines } = context();
    const { outputs } = await provisionerLifecycle.create(inputs, ctx);

    // THEN the archive started before the listing ended
    expect(lines.some((l) => /files in one archive while listing the rest/.test(l))).toBe(true);
    // AND the sandbox holds every file with its content and mode, the later spec's at its path
    await expectProvisioned(sandbox, specs, outputs.fileDigest, "/home/user/early");
    const f0 = await sandbox.run("cat /home/user/early/d0/f0.txt");
    expect(f0.stdout).toBe("the later spec's content\n");
  });

  it("sends the small files of a tree of mostly large ones through the tar started while it was listed", async () => {
    // GIVEN a tree of as many files as the threshold, ten of them too large for an archive
    const root = path.join(fx.work, "mostly-large");
    mkdirSync(root);
    for (let i = 0; i < ARCHIVE_MIN_FILES; i++) {
      const body = i < 10 ? Buffer.alloc(ARCHIVE_MAX_FILE_BYTES + 1, i) : `small ${i}\n`;
      writeFileSync(path.join(root, `f${i}`), body);
    }
    const sandbox = await ownSandbox();
    const specs = [{ source: root, destination: "/home/user/ml" }];

    // WHEN provisioned
    const { ctx, lines } = context();
    const { outputs } = await provisionerLifecycle.create(
      { sandboxID: sandbox.sandboxID, files: specs },
      ctx,
    );

    // THEN the small ones went as one archive once the listing ended (tar was
    // started when the walk found that many files), the large ones on their own
    const small = ARCHIVE_MIN_FILES - 10;
    expect(lines.filter((l) => /files in one archive/.test(l))).toEqual([
      `uploading ${small} files in one archive`,
    ]);
    // AND every file is in the sandbox with its content, and no tar is left
    await expectProvisioned(sandbox, specs, outputs.fileDigest, "/home/user/ml");
    expect(await tarsIn(sandbox)).toBe("");
  });

  it("kills the tar started ahead of an archive when the listing fails before the archive starts", async () => {
    // GIVEN an early archive whose tar started once the walk found enough files
    const sandbox = await ownSandbox();
    const early = EarlyArchive.of([{ source: "tree", destination: "/home/user/killed" }], {
      log: () => undefined,
    })!;
    early.attach(sandbox);
    early.walked(ARCHIVE_MIN_FILES);
    await eventually(async () => (await tarsIn(sandbox)) !== "");

    // WHEN the listing fails before any file is listed
    const failure = new Error("the listing failed");
    early.end({ error: failure });

    // THEN the archive fails with the listing's error, and its tar is gone
    await expect(early.archive?.sent).rejects.toThrow(
      `provisioner.files failed: ${failure.message}`,
    );
    await eventually(async () => (await tarsIn(sandbox)) === "");
    expect((await sandbox.run("ls -A /home/user")).stdout).toBe("");
  });

  it("falls back to multipart batches in a sandbox without tar", async () => {
    // GIVEN a sandbox whose tar is gone (its /usr is its own copy-on-write layer)
    const root = manyFiles("without-tar");
    const sandbox = await ownSandbox();
    await sandbox.run('mv "$(command -v tar)" /usr/bin/tar.hidden', { user: "root" });

    // WHEN provisioned THEN the files arrive by the other path, complete
    const { ctx, lines } = context();
    await provisionerLifecycle.create(
      { sandboxID: sandbox.sandboxID, files: [{ source: root, destination: "/home/user/nt" }] },
      ctx,
    );
    expect(lines.some((l) => l.startsWith("tar is not available in sandbox"))).toBe(true);
    const manifest = await buildManifest([{ source: root, destination: "/x" }], fx.work);
    const count = await sandbox.run("find /home/user/nt -type f | wc -l");
    expect(Number(count.stdout.trim())).toBe(manifest.files.length);
    expect(await listing(sandbox, "/home/user/nt")).toContain("./private d 700 user user");
    expect((await sandbox.run("ls -A /home/user")).stdout).toBe("nt\n");
  });

  it("feeds tar through a 1 MiB stdin pipe, not the default 64 KiB one", async () => {
    // GIVEN a sandbox whose tar first notes the size of its stdin pipe (F_GETPIPE_SZ, 1032)
    const root = manyFiles("pipe-size");
    const sandbox = await ownSandbox();
    await sandbox.run(
      `real="$(command -v tar)" && printf '%s\\n' '#!/bin/sh' ` +
        `"perl -e 'print fcntl(STDIN, 1032, 0)' > /tmp/tar-stdin-bytes" ` +
        `"exec $real \\"\\$@\\"" > /usr/local/bin/tar && chmod 755 /usr/local/bin/tar`,
      { user: "root" },
    );
    expect((await sandbox.run("command -v tar")).stdout).toBe("/usr/local/bin/tar\n");

    // WHEN provisioned
    const { ctx } = context();
    await provisionerLifecycle.create(
      { sandboxID: sandbox.sandboxID, files: [{ source: root, destination: "/home/user/p" }] },
      ctx,
    );

    // THEN tar read a 1 MiB pipe, and the files arrived
    expect((await sandbox.run("cat /tmp/tar-stdin-bytes")).stdout).toBe(String(1 << 20));
    const manifest = await buildManifest([{ source: root, destination: "/home/user/p" }], fx.work);
    await expectFilesIn(sandbox, "/home/user/p", manifest.files);
  });

  it("extracts with tar alone in a sandbox without perl", async () => {
    // GIVEN a sandbox whose perl is gone (the pipe then keeps its size)
    const root = manyFiles("without-perl");
    const sandbox = await ownSandbox();
    await sandbox.run('mv "$(command -v perl)" /usr/bin/perl.hidden', { user: "root" });

    // WHEN provisioned
    const { ctx, lines } = context();
    await provisionerLifecycle.create(
      { sandboxID: sandbox.sandboxID, files: [{ source: root, destination: "/home/user/np" }] },
      ctx,
    );

    // THEN the archive took the files, every one with its content and mode
    expect(lines.some((l) => /files in one archive/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith("tar is not available in sandbox"))).toBe(false);
    const manifest = await buildManifest([{ source: root, destination: "/home/user/np" }], fx.work);
    await expectFilesIn(sandbox, "/home/user/np", manifest.files);
  });

  it("fails with tar's complaint when the sandbox cannot take the files", async () => {
    // GIVEN files above the threshold (no empty directory, so no mkdir runs
    // first) and a destination under a regular file
    const root = path.join(fx.work, "refused");
    mkdirSync(root);
    for (let i = 0; i < ARCHIVE_MIN_FILES; i++) writeFileSync(path.join(root, `f${i}`), `${i}\n`);
    const sandbox = await ownSandbox();
    await sandbox.run("touch /home/user/blocker");

    // WHEN provisioned THEN it fails as the extraction's failed command, with tar's reason
    const err: unknown = await provisionerLifecycle
      .create(
        {
          sandboxID: sandbox.sandboxID,
          files: [{ source: root, destination: "/home/user/blocker/tree" }],
        },
        context().ctx,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(SandboxIacError.hasCode(err, "command_failed")).toBe(true);
    expect(String((err as Error).message)).toMatch(/tar -x[\s\S]*Not a directory/);
  });
});
