output "id" {
  description = "The service's id."
  value       = terraform_data.service.id
}

output "full_name" {
  description = "The service's name with its environment, as used in other systems."
  value       = local.full_name
}

output "tags" {
  description = "The tags set on every object."
  value       = local.tags
}

output "api_token" {
  description = "The token, for modules that pass it on; marked sensitive."
  value       = var.api_token
  sensitive   = true
}
