# A stand-in service module: the built-in terraform_data resource plays the service, so
# the module plans, applies and tests offline.

locals {
  full_name = "${var.name}-${var.environment}"
  tags = merge(var.tags, {
    name        = var.name
    environment = var.environment
  })
}

resource "terraform_data" "service" {
  input = {
    name     = local.full_name
    replicas = var.replicas
    tags     = local.tags
  }

  lifecycle {
    precondition {
      condition     = var.environment != "prod" || var.replicas >= 2
      error_message = "A prod service needs at least 2 replicas."
    }
  }
}

resource "terraform_data" "credentials" {
  input = sha256(var.api_token)
}
