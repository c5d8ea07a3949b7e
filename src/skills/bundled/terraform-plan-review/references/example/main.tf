# A stand-in for a real stack, with Terraform's built-in `terraform_data` resource, so it
# plans and applies offline. Apply with release = 1, then plan release = 2: the plan holds
# one create, one update, one replacement and one delete, and a sensitive output.

variable "release" {
  description = "Which release of the stack to plan (1 or 2)."
  type        = number
  default     = 1
}

variable "db_password" {
  description = "A stand-in secret; it must never appear in a plan summary."
  type        = string
  default     = "example-not-a-real-secret"
  sensitive   = true
}

# Updated in place when the release changes.
resource "terraform_data" "app" {
  input = "app-v${var.release}"
}

# Replaced when the engine changes: triggers_replace cannot be updated in place.
resource "terraform_data" "db" {
  input            = "db"
  triggers_replace = [var.release >= 2 ? "engine-16" : "engine-15"]
}

# Deleted in release 2 (count drops to 0).
resource "terraform_data" "cache" {
  count = var.release >= 2 ? 0 : 1
  input = "cache"
}

# Created in release 2.
resource "terraform_data" "queue" {
  count = var.release >= 2 ? 1 : 0
  input = "queue"
}

# Changes with the release, and holds the secret: the summary names it, never its value.
output "connection_string" {
  value     = "postgres://app:${var.db_password}@db-r${var.release}.internal/app"
  sensitive = true
}
