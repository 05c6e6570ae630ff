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

resource "sandboxiac_provisioner" "setup" {
  template     = sandboxiac_template.tools.template_id
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
  sandbox_id = sandboxiac_provisioner.setup.kept_sandbox_id
  name       = "tf-tools-again"
}

output "template_id" { value = sandboxiac_template.tools.template_id }
output "state" { value = data.sandboxiac_sandbox.kept.state }
