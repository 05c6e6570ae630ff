/**
 * What the Template resource's unit tests share: a program directory with a
 * COPY source of every kind of entry, and inputs that copy it.
 */
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  templateArgsSchema,
  type TemplateInputs,
} from "../../src/resources/template/template.args";

/**
 * A new program directory whose `files/` holds a file, an executable in a
 * subdirectory, a dotfile and a symlink (the caller removes it).
 */
export function makeProgramDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "template-test-"));
  mkdirSync(path.join(dir, "files", "sub"), { recursive: true });
  writeFileSync(path.join(dir, "files", "a.txt"), "hello\n");
  writeFileSync(path.join(dir, "files", "sub", "b.sh"), "echo hi\n");
  chmodSync(path.join(dir, "files", "sub", "b.sh"), 0o755);
  writeFileSync(path.join(dir, "files", ".hidden"), "dot\n");
  symlinkSync("a.txt", path.join(dir, "files", "link"));
  return dir;
}

/** Template `tools` from `base`, with a step of each kind (COPY of `files/` first), plus `extra`. */
export function templateInputs(extra: Partial<TemplateInputs> = {}): TemplateInputs {
  return templateArgsSchema.parse({
    name: "tools",
    build: {
      fromTemplate: "base",
      steps: [
        { copy: { src: "files", dest: "/app", user: "root", mode: 0o755 } },
        { run: ["apt-get update", "apt-get install -y jq"], user: "root" },
        { env: { A: "1", B: "two" } },
        { workdir: "/app" },
        { user: "user" },
      ],
    },
    ...extra,
  });
}
