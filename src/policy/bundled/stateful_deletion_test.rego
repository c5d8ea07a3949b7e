package iac_code.stateful_deletion

change(type, actions) := {"resource_changes": [{"address": sprintf("%s.x", [type]), "type": type, "change": {"actions": actions}}]}

test_a_deleted_database_warns if {
	warn == {"aws_db_instance.x (aws_db_instance) would be deleted: the data it holds may be lost"} with input as change("aws_db_instance", ["delete"])
}

test_a_replaced_bucket_warns if {
	count(warn) == 1 with input as change("google_storage_bucket", ["delete", "create"])
}

test_a_replaced_azure_disk_warns if {
	count(warn) == 1 with input as change("azurerm_managed_disk", ["create", "delete"])
}

test_an_update_does_not_warn if {
	count(warn) == 0 with input as change("aws_kms_key", ["update"])
}

test_a_stateless_deletion_does_not_warn if {
	count(warn) == 0 with input as change("aws_security_group", ["delete"])
}
