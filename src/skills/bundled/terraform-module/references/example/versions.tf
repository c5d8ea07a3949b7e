terraform {
  # `terraform test` needs 1.6; mock providers in tests would need 1.7.
  required_version = ">= 1.6"

  # A real module names every provider it uses, with a lower bound it was tested with and
  # no upper pin tighter than the next major version, for example:
  # required_providers {
  #   aws = {
  #     source  = "hashicorp/aws"
  #     version = ">= 5.0, < 7.0"
  #   }
  # }
  # This example uses only the built-in terraform_data resource, so it needs none.
}
