package iac_code.unencrypted_storage

plan(type, after) := {"resource_changes": [{"address": sprintf("%s.x", [type]), "type": type, "change": {"actions": ["create"], "after": after, "after_unknown": {}}}]}

test_an_unencrypted_volume_warns if {
	warn == {"aws_ebs_volume.x is stored unencrypted (encrypted is not true)"} with input as plan("aws_ebs_volume", {"size": 10, "encrypted": false})
}

test_a_database_without_the_flag_warns if {
	count(warn) == 1 with input as plan("aws_db_instance", {"engine": "postgres"})
}

test_an_encrypted_volume_is_fine if {
	count(warn) == 0 with input as plan("aws_ebs_volume", {"encrypted": true})
}

test_azure_database_without_tde_warns if {
	count(warn) == 1 with input as plan("azurerm_mssql_database", {"transparent_data_encryption_enabled": false})
}
