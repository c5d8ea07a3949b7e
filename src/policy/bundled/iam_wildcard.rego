# An IAM policy that allows every action on every resource: denied. AWS policy documents
# (the `policy` attribute of the policy resources) and Azure role definitions.
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
	rc.type == "azurerm_role_definition"
	some action in rc.change.actions
	action in {"create", "update"}
	a := rc.change.after
	some permission in a.permissions
	"*" in permission.actions
	root_scope(a)
	msg := sprintf("%s allows every action (*) at the root scope (/)", [rc.address])
}

statements(doc) := doc.Statement if is_array(doc.Statement)

statements(doc) := [doc.Statement] if is_object(doc.Statement)

wildcard(x) if x == "*"

wildcard(x) if {
	is_array(x)
	"*" in x
}

root_scope(a) if a.scope == "/"

root_scope(a) if "/" in object.get(a, "assignable_scopes", [])
