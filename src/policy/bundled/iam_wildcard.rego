# An IAM grant of every action on every resource: denied. AWS policy documents (the
# `policy` attribute of the policy resources, a role's inline policies) and the
# AdministratorAccess managed policy attached; Google Cloud's basic Owner role granted on a
# project, folder or organization; Azure role definitions allowing `*` at the root or a
# whole subscription.
package iac_code.iam_wildcard

aws_policy_types := {
	"aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy",
	"aws_s3_bucket_policy", "aws_kms_key",
}

deny contains msg if {
	some rc in input.resource_changes
	aws_policy_types[rc.type]
	some action in rc.change.actions
	action in {"create", "update"}
	text := rc.change.after.policy
	is_string(text)
	some statement in statements(json.unmarshal(text))
	statement.Effect == "Allow"
	wildcard(object.get(statement, "Action", []))
	wildcard(object.get(statement, "Resource", []))
	msg := sprintf("%s allows every action (*) on every resource (*)", [rc.address])
}

deny contains msg if {
	some rc in input.resource_changes
	rc.type == "aws_iam_role"
	some action in rc.change.actions
	action in {"create", "update"}
	some inline in object.get(rc.change.after, "inline_policy", [])
	text := inline.policy
	is_string(text)
	some statement in statements(json.unmarshal(text))
	statement.Effect == "Allow"
	wildcard(object.get(statement, "Action", []))
	wildcard(object.get(statement, "Resource", []))
	msg := sprintf("%s has an inline policy allowing every action (*) on every resource (*)", [rc.address])
}

aws_attachment_types := {
	"aws_iam_role_policy_attachment", "aws_iam_user_policy_attachment",
	"aws_iam_group_policy_attachment", "aws_iam_policy_attachment",
}

deny contains msg if {
	some rc in input.resource_changes
	aws_attachment_types[rc.type]
	some action in rc.change.actions
	action in {"create", "update"}
	endswith(object.get(rc.change.after, "policy_arn", ""), ":policy/AdministratorAccess")
	msg := sprintf("%s attaches AdministratorAccess (every action on every resource)", [rc.address])
}

google_grant_types := {
	"google_project_iam_member", "google_project_iam_binding",
	"google_folder_iam_member", "google_folder_iam_binding",
	"google_organization_iam_member", "google_organization_iam_binding",
}

deny contains msg if {
	some rc in input.resource_changes
	google_grant_types[rc.type]
	some action in rc.change.actions
	action in {"create", "update"}
	rc.change.after.role == "roles/owner"
	msg := sprintf("%s grants roles/owner (every permission on every resource)", [rc.address])
}

deny contains msg if {
	some rc in input.resource_changes
	rc.type == "azurerm_role_definition"
	some action in rc.change.actions
	action in {"create", "update"}
	a := rc.change.after
	some permission in a.permissions
	"*" in permission.actions
	some scope in broad_scopes(a)
	msg := sprintf("%s allows every action (*) at %s", [rc.address, scope])
}

statements(doc) := doc.Statement if is_array(doc.Statement)

statements(doc) := [doc.Statement] if is_object(doc.Statement)

wildcard(x) if x in {"*", "*:*"}

wildcard(x) if {
	is_array(x)
	some w in x
	w in {"*", "*:*"}
}

# The root (/) and whole subscriptions (/subscriptions/ID), where a role is defined or
# assignable.
broad_scopes(a) := {s |
	some s in array.concat([object.get(a, "scope", "")], object.get(a, "assignable_scopes", []))
	broad(s)
}

broad(s) if s == "/"

broad(s) if regex.match(`^/subscriptions/[^/]+/?$`, s)
