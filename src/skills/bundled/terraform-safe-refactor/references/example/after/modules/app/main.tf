# The module the web resource moved into.

variable "name" {
  description = "The application's name."
  type        = string
}

resource "terraform_data" "this" {
  input = var.name
}

output "id" {
  description = "The object's id."
  value       = terraform_data.this.id
}
