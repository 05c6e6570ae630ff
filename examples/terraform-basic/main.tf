terraform {
  required_providers {
    sandboxiac = { source = "sandbox-iac/sandboxiac" }
  }
}
provider "sandboxiac" {} # E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY; or api_url, sandbox_url, domain, api_key

resource "sandboxiac_template" "tools" {
  name      = "tf-tools"
  tags      = ["v1"]
  cpu_count = 1
  memory_mb = 512
  build = {
    from_template = "base"
    steps = [
      { run = ["mkdir -p /opt/app", "chown user /opt/app"], user = "root" },
      { copy = { src = "files/app", dest = "/opt/app" } },
      { env = { APP_HOME = "/opt/app" } },
    ]
  }
}

# A template from a container image when var.image names one (npm run demo:terraform
# serves a busybox image from a registry on loopback): the image's layers, then
# E2B's conventions on top (user `user` with /home/user, the agent).
variable "image" {
  type    = string
  default = ""
}

resource "sandboxiac_template" "from_image" {
  count     = var.image == "" ? 0 : 1
  name      = "tf-from-image"
  cpu_count = 1
  memory_mb = 512
  build = {
    from_image = var.image
    steps      = [{ run = ["cp /etc/image-note /home/user/note.txt"] }]
  }
}

resource "sandboxiac_provisioner" "image_check" {
  count    = var.image == "" ? 0 : 1
  template = sandboxiac_template.from_image[0].ref
  commands = [{ run = "echo \"$(whoami): $(cat /home/user/note.txt)\"" }]
}

resource "sandboxiac_provisioner" "setup" {
  # The template at its current build: a rebuild runs the Provisioner again and retakes its snapshot.
  template     = sandboxiac_template.tools.ref
  files        = [{ source = "files/config", destination = "/home/user/config" }]
  commands     = [{ run = "cat /home/user/config/settings.json" }]
  triggers     = { revision = "1" }
  snapshot     = { name = "tf-tools-ready" }
  keep_sandbox = true
}

data "sandboxiac_sandbox" "kept" {
  sandbox_id = sandboxiac_provisioner.setup.kept_sandbox_id
}

resource "sandboxiac_snapshot" "again" {
  # The kept sandbox as the last run left it: every run of the Provisioner retakes this snapshot.
  sandbox_id = sandboxiac_provisioner.setup.kept_sandbox_ref
  name       = "tf-tools-again"
}

# A volume outlives sandboxes: one provisioner's sandbox writes into it, a second sandbox reads it.
resource "sandboxiac_volume" "workspace" {
  name  = "tf-workspace"
  files = [{ source = "files/config/settings.json", destination = "/settings.json" }]
}

resource "sandboxiac_provisioner" "writer" {
  template      = "base"
  volume_mounts = [{ name = sandboxiac_volume.workspace.name, path = "/mnt/workspace" }]
  commands      = [{ run = "echo 'written by the writer' > /mnt/workspace/note.txt" }]
}

resource "sandboxiac_provisioner" "reader" {
  template      = "base"
  volume_mounts = [{ name = sandboxiac_volume.workspace.name, path = "/mnt/workspace" }]
  # Fails the apply unless the writer's file is there.
  commands = [{ run = "grep -x 'written by the writer' /mnt/workspace/note.txt" }]
  triggers = { written = sandboxiac_provisioner.writer.id }
}

output "template_id" { value = sandboxiac_template.tools.template_id }
output "state" { value = data.sandboxiac_sandbox.kept.state }
output "volume_id" { value = sandboxiac_volume.workspace.volume_id }
output "image_digest" { value = one(sandboxiac_template.from_image[*].image_digest) }
