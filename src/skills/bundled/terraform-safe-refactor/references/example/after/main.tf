# The same infrastructure after the refactor: web moved into a module, workers keyed by
# name instead of by index, legacy no longer managed (but not destroyed), and an object
# created outside Terraform adopted with an import block.

module "app" {
  source = "./modules/app"
  name   = "web"
}

moved {
  from = terraform_data.web
  to   = module.app.terraform_data.this
}

locals {
  workers = {
    blue  = "worker-0"
    green = "worker-1"
  }
}

resource "terraform_data" "worker" {
  for_each = local.workers
  input    = each.value
}

moved {
  from = terraform_data.worker[0]
  to   = terraform_data.worker["blue"]
}

moved {
  from = terraform_data.worker[1]
  to   = terraform_data.worker["green"]
}

# Terraform 1.7 or later: forget the object, leave it running.
removed {
  from = terraform_data.legacy

  lifecycle {
    destroy = false
  }
}

# Terraform 1.5 or later: adopt an existing object instead of creating a second one.
import {
  to = terraform_data.adopted
  id = "adopted-1"
}

resource "terraform_data" "adopted" {}
