import { sdk } from "./util";
import { startServiceProcess, type ServiceProcess } from "../support/service";

jest.setTimeout(300_000);

let svc: ServiceProcess;
beforeAll(async () => {
  svc = await startServiceProcess();
});
afterAll(async () => {
  await svc?.close();
});

/** Writes a minimal pure-Python wheel to /tmp (offline: no index is reachable from a test). */
const MAKE_WHEEL = `python3 - <<'PY'
import base64, hashlib, zipfile
name = "demo_e2b_pkg-1.0"
files = {
    "demo_e2b_pkg.py": b"VALUE = 42\\n",
    name + ".dist-info/METADATA": b"Metadata-Version: 2.1\\nName: demo-e2b-pkg\\nVersion: 1.0\\n",
    name + ".dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join("%s,%s,%d\\n" % (p, digest(b), len(b)) for p, b in files.items()) + name + ".dist-info/RECORD,,\\n"
with zipfile.ZipFile("/tmp/" + name + "-py3-none-any.whl", "w") as z:
    for p, b in files.items():
        z.writestr(p, b)
    z.writestr(name + ".dist-info/RECORD", record)
PY`;

describe("the built-in base template", () => {
  it("lets user pip install --user and root pip install in template builds, as E2B's base image does", async () => {
    const wheel = "/tmp/demo_e2b_pkg-1.0-py3-none-any.whl";
    const built = await sdk(
      svc,
      "build-cmd",
      "pip-app",
      "base",
      `set -e; ${MAKE_WHEEL}
pip install --user --no-index -q ${wheel}
python -c "import demo_e2b_pkg; print('user', demo_e2b_pkg.VALUE)"
sudo pip install --no-index -q ${wheel} 2>/dev/null
sudo python3 -c "import demo_e2b_pkg, sys; print('root', demo_e2b_pkg.VALUE)"`,
    );
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toEqual(expect.arrayContaining(["user 42", "root 42"]));
  });

  it("has python, python3, pip, node, npm, git and curl on PATH when the host has them", async () => {
    const ran = await sdk(
      svc,
      "run-in",
      "base",
      "for c in python python3 pip node npm git curl; do command -v $c >/dev/null && echo $c; done",
    );
    expect(ran.stdout).toBe("python\npython3\npip\nnode\nnpm\ngit\ncurl\n");
  });
});
