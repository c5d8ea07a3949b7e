# Run with `terraform init` then `terraform test` in the module's directory.

variables {
  name        = "billing"
  environment = "staging"
  api_token   = "test-token"
}

run "names_and_tags" {
  command = plan

  assert {
    condition     = output.full_name == "billing-staging"
    error_message = "full_name must join the name and the environment."
  }

  assert {
    condition     = output.tags["environment"] == "staging" && output.tags["name"] == "billing"
    error_message = "The module must add name and environment tags."
  }
}

run "caller_tags_are_kept" {
  command = plan

  variables {
    tags = { team = "payments" }
  }

  assert {
    condition     = output.tags["team"] == "payments"
    error_message = "The caller's tags must be kept."
  }
}

run "rejects_a_bad_name" {
  command = plan

  variables {
    name = "Billing_Service"
  }

  expect_failures = [var.name]
}

run "rejects_an_unknown_environment" {
  command = plan

  variables {
    environment = "qa"
  }

  expect_failures = [var.environment]
}

run "rejects_zero_replicas" {
  command = plan

  variables {
    replicas = 0
  }

  expect_failures = [var.replicas]
}

run "prod_needs_two_replicas" {
  command = plan

  variables {
    environment = "prod"
    replicas    = 1
  }

  expect_failures = [terraform_data.service]
}

run "applies" {
  command = apply

  assert {
    condition     = terraform_data.service.output.replicas == 2
    error_message = "The default must be 2 replicas."
  }
}
