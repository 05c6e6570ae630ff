/**
 * Runs the real terraform binary on a configuration in a temp directory,
 * with the provider installed by `installProvider` into a shared plugin
 * directory. Terraform runs asynchronously: the local service answers from
 * the test process itself.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { installProvider, packageVersion } from "../../src/terraform/install";
import { PROVIDER_ENTRY } from "./provider-process";

const REPO = path.resolve(__dirname, "..", "..");

/** The terraform binary's version line, or undefined when terraform is not on PATH. */
export function terraformVersion(): string | undefined {
  const res = spawnSync("terraform", ["version"], { encoding: "utf8" });
  return res.error || res.status !== 0 ? undefined : res.stdout.split("\n")[0];
}

/** Installs the built provider into a new plugin directory; returns the directory. */
export function installPlugins(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tf-plugins-"));
  installProvider({ dir, version: packageVersion(), entry: PROVIDER_ENTRY });
  return dir;
}

/** What one terraform command did. */
export interface TfRun {
  code: number | null;
  /** stdout and stderr together. */
  output: string;
}

/** A configuration directory with the example's local files. */
export class Workspace {
  readonly dir: string;
  /** Every output terraform printed in this workspace. */
  readonly outputs: string[] = [];

  constructor(
    hcl: string,
    private readonly plugins: string,
    private readonly env: Record<string, string>,
  ) {
    this.dir = mkdtempSync(path.join(tmpdir(), "tf-work-"));
    cpSync(path.join(REPO, "examples", "terraform-basic", "files"), path.join(this.dir, "files"), {
      recursive: true,
    });
    this.write(hcl);
  }

  /** Replaces main.tf. */
  write(hcl: string): void {
    writeFileSync(path.join(this.dir, "main.tf"), hcl);
  }

  /** Runs `terraform <args> -no-color`. */
  tf(...args: string[]): Promise<TfRun> {
    return this.start(...args).done;
  }

  /**
   * Starts `terraform <args> -no-color` in its own process group, as a shell
   * runs a foreground job: `interrupt()` sends SIGINT to the group, as Ctrl-C
   * in a terminal does; `kill()` sends SIGKILL to terraform alone, as an OOM
   * killer or a CI runner's timeout does; `done` resolves when terraform has exited.
   */
  start(...args: string[]): {
    pid: number;
    interrupt(): void;
    kill(): void;
    done: Promise<TfRun>;
  } {
    const child = spawn("terraform", [...args, "-no-color"], {
      cwd: this.dir,
      detached: true,
      env: {
        ...process.env,
        ...this.env,
        CHECKPOINT_DISABLE: "1",
        TF_IN_AUTOMATION: "1",
        TF_CLI_CONFIG_FILE: "/dev/null",
      },
    });
    return {
      pid: child.pid!,
      interrupt: () => process.kill(-child.pid!, "SIGINT"),
      kill: () => process.kill(child.pid!, "SIGKILL"),
      done: this.collect(child),
    };
  }

  private async collect(child: ChildProcessWithoutNullStreams): Promise<TfRun> {
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    this.outputs.push(output);
    return { code, output };
  }

  /** `terraform init` from the plugin directory. */
  init(): Promise<TfRun> {
    return this.tf("init", "-input=false", `-plugin-dir=${this.plugins}`);
  }

  /** The state file's text ("" before the first apply). */
  stateText(): string {
    const file = path.join(this.dir, "terraform.tfstate");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  /** The attributes of one resource instance in the state (`type.name`). */
  resource(address: string): Record<string, unknown> | undefined {
    const text = this.stateText();
    if (!text) return undefined;
    const [type, name] = address.split(".");
    const state = JSON.parse(text) as {
      resources: Array<{
        mode: string;
        type: string;
        name: string;
        instances: Array<{ attributes: Record<string, unknown> }>;
      }>;
    };
    return state.resources.find((r) => r.mode === "managed" && r.type === type && r.name === name)
      ?.instances[0]?.attributes;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
