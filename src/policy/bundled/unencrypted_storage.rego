# Storage created or changed without encryption at rest: a warning. Only attributes that
# default to unencrypted (or are explicitly turned off) are judged. Storage a cloud always
# encrypts is not: S3 (since 2023), every Google Cloud disk, bucket and database (Google's
# keys unless a customer key is named, which is a choice of keys, not of encryption), Azure
# storage accounts and managed disks (platform keys). Azure SQL's transparent data
# encryption can be turned off, so it is judged.
package iac_code.unencrypted_storage

# The attribute that must be true, per resource type.
encryption_flags := {
	"aws_ebs_volume": "encrypted",
	"aws_efs_file_system": "encrypted",
	"aws_db_instance": "storage_encrypted",
	"aws_rds_cluster": "storage_encrypted",
	"aws_docdb_cluster": "storage_encrypted",
	"aws_neptune_cluster": "storage_encrypted",
	"aws_redshift_cluster": "encrypted",
	"aws_elasticache_replication_group": "at_rest_encryption_enabled",
	"azurerm_mssql_database": "transparent_data_encryption_enabled",
}

warn contains msg if {
	some rc in input.resource_changes
	attribute := encryption_flags[rc.type]
	some action in rc.change.actions
	action in {"create", "update"}
	object.get(rc.change.after, attribute, false) != true
	not unknown(rc, attribute)
	msg := sprintf("%s is stored unencrypted (%s is not true)", [rc.address, attribute])
}

# A value known only after apply (`after_unknown`) is not judged.
unknown(rc, attribute) if rc.change.after_unknown[attribute] == true
