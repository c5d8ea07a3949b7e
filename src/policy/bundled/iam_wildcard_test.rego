package iac_code.iam_wildcard

plan(type, after) := {"resource_changes": [{"address": sprintf("%s.x", [type]), "type": type, "change": {"actions": ["create"], "after": after}}]}

test_admin_policy_is_denied if {
	deny == {"aws_iam_policy.x allows every action (*) on every resource (*)"} with input as plan("aws_iam_policy", {"policy": "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*\",\"Resource\":\"*\"}]}"})
}

test_a_single_statement_object_is_read if {
	count(deny) == 1 with input as plan("aws_iam_role_policy", {"policy": "{\"Statement\":{\"Effect\":\"Allow\",\"Action\":[\"*\"],\"Resource\":[\"*\"]}}"})
}

test_a_scoped_policy_is_allowed if {
	count(deny) == 0 with input as plan("aws_iam_policy", {"policy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"s3:GetObject\",\"Resource\":\"*\"}]}"})
}

test_an_unknown_policy_is_not_judged if {
	count(deny) == 0 with input as plan("aws_iam_policy", {"policy": null})
}

test_azure_owner_at_root_is_denied if {
	count(deny) == 1 with input as plan("azurerm_role_definition", {"scope": "/", "permissions": [{"actions": ["*"]}]})
}

test_action_star_colon_star_is_a_wildcard if {
	count(deny) == 1 with input as plan("aws_iam_policy", {"policy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*:*\",\"Resource\":\"*\"}]}"})
}

test_a_roles_inline_admin_policy_is_denied if {
	count(deny) == 1 with input as plan("aws_iam_role", {"inline_policy": [{"name": "all", "policy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*\",\"Resource\":\"*\"}]}"}]})
}

test_administrator_access_attached_is_denied if {
	count(deny) == 1 with input as plan("aws_iam_role_policy_attachment", {"role": "ci", "policy_arn": "arn:aws:iam::aws:policy/AdministratorAccess"})
	count(deny) == 0 with input as plan("aws_iam_role_policy_attachment", {"role": "ci", "policy_arn": "arn:aws:iam::aws:policy/ReadOnlyAccess"})
}

test_google_owner_is_denied if {
	count(deny) == 1 with input as plan("google_project_iam_member", {"role": "roles/owner", "member": "user:a@example.com"})
	count(deny) == 0 with input as plan("google_project_iam_member", {"role": "roles/viewer", "member": "user:a@example.com"})
}

test_azure_star_on_a_subscription_is_denied if {
	count(deny) == 1 with input as plan("azurerm_role_definition", {"scope": "/subscriptions/0000", "permissions": [{"actions": ["*"]}]})
	count(deny) == 0 with input as plan("azurerm_role_definition", {"scope": "/subscriptions/0000/resourceGroups/rg", "permissions": [{"actions": ["*"]}]})
}
