variable "name" {
  description = "The service's name: 3 to 32 lower-case letters, digits and hyphens, starting with a letter."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,31}$", var.name))
    error_message = "The name must be 3 to 32 lower-case letters, digits or hyphens, starting with a letter."
  }
}

variable "environment" {
  description = "Where the service runs: dev, staging or prod."
  type        = string

  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "The environment must be one of dev, staging, prod."
  }
}

variable "replicas" {
  description = "How many instances to run (1 to 10); prod needs at least 2."
  type        = number
  default     = 2

  validation {
    condition     = var.replicas >= 1 && var.replicas <= 10 && floor(var.replicas) == var.replicas
    error_message = "The replicas must be a whole number from 1 to 10."
  }
}

variable "tags" {
  description = "Extra tags for every object; the module adds name and environment."
  type        = map(string)
  default     = {}
}

variable "api_token" {
  description = "The token the service uses to call its upstream; never shown in plans or outputs."
  type        = string
  sensitive   = true
  nullable    = false
}
