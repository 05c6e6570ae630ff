// Drives the official e2b SDK (ESM, so it runs outside jest) against an agent
// at process.env.SANDBOX_URL in debug mode, and prints what it observed as JSON.
import { Sandbox, CommandExitError } from "e2b";

const out = {};
const sandbox = await Sandbox.create({ debug: true, sandboxUrl: process.env.SANDBOX_URL });

const ok = await sandbox.commands.run("echo hi; whoami; pwd");
out.run = { exitCode: ok.exitCode, stdout: ok.stdout };
const err = await sandbox.commands.run("echo bad >&2; exit 4").catch((e) => e);
out.runFail = {
  isExitError: err instanceof CommandExitError,
  exitCode: err.exitCode,
  stderr: err.stderr,
};

const handle = await sandbox.commands.run("cat", { background: true, stdin: true });
await sandbox.commands.sendStdin(handle.pid, "piped\n");
out.listed = (await sandbox.commands.list()).some((p) => p.pid === handle.pid);
await sandbox.commands.closeStdin(handle.pid);
out.stdinResult = (await handle.wait()).stdout;
const sleeper = await sandbox.commands.run("sleep 30", { background: true });
out.killed = await sandbox.commands.kill(sleeper.pid);
out.killUnknown = await sandbox.commands.kill(999999);

await sandbox.files.write("sdk/a.txt", "content");
await sandbox.files.write([{ path: "sdk/b.txt", data: "bee" }]);
await sandbox.files.write("sdk/c.txt", "gz", { gzip: true, metadata: { k: "v" } });
out.read = await sandbox.files.read("sdk/a.txt");
out.readBytes = Buffer.from(await sandbox.files.read("sdk/b.txt", { format: "bytes" })).toString();
out.readGzip = await sandbox.files.read("sdk/c.txt", { gzip: true });
out.list = (await sandbox.files.list("sdk")).map((e) => [e.name, e.type]);
out.metadata = (await sandbox.files.getInfo("sdk/c.txt")).metadata;
out.makeDir = [await sandbox.files.makeDir("sdk/dir"), await sandbox.files.makeDir("sdk/dir")];
await sandbox.files.rename("sdk/a.txt", "sdk/dir/a.txt");
out.existsAfterRename = await sandbox.files.exists("sdk/a.txt");
out.sizeAfterRename = (await sandbox.files.getInfo("sdk/dir/a.txt")).size;
await sandbox.files.remove("sdk");
out.existsAfterRemove = await sandbox.files.exists("sdk");

await sandbox.files.makeDir("watched");
const events = [];
let seen;
const gotWrite = new Promise((r) => (seen = r));
const watcher = await sandbox.files.watchDir("watched", (e) => {
  events.push(`${e.type}:${e.name}`);
  if (e.type === "write") seen();
});
await sandbox.files.write("watched/f.txt", "x");
await gotWrite;
await watcher.stop();
out.watchEvents = events;

let ptyOut = "";
const pty = await sandbox.pty.create({
  cols: 80,
  rows: 24,
  onData: (d) => (ptyOut += Buffer.from(d).toString()),
});
await sandbox.pty.sendInput(pty.pid, new Uint8Array(Buffer.from("echo pty-$((1+2)); exit\n")));
await pty.wait().catch(() => undefined);
out.ptyHasOutput = ptyOut.includes("pty-3");

process.stdout.write(JSON.stringify(out));
