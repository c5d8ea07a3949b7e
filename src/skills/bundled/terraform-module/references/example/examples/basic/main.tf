# The smallest working use of the module.

module "service" {
  source = "../.."

  name        = "billing"
  environment = "dev"
  replicas    = 1
  api_token   = var.api_token
}

variable "api_token" {
  description = "Passed on to the module; set it with TF_VAR_api_token, never in a file."
  type        = string
  sensitive   = true
}

output "full_name" {
  value = module.service.full_name
}
