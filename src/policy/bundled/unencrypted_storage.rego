# Storage created or changed without encryption at rest: a warning. Only attributes that
# default to unencrypted (or are explicitly turned off) are judged; storage every cloud
# encrypts by default (S3, Google Cloud disks and buckets, Azure storage accounts) is not.
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
	"azurerm_managed_disk": "secure_vm_disk_encryption_set_id",
	"google_sql_database_instance": "encryption_key_name",
}

# Attributes that hold a key rather than a flag: absent means the provider's default keys.
key_attributes := {"secure_vm_disk_encryption_set_id", "encryption_key_name"}

warn contains msg if {
	some rc in input.resource_changes
	attribute := encryption_flags[rc.type]
	not key_attributes[attribute]
	some action in rc.change.actions
	action in {"create", "update"}
	object.get(rc.change.after, attribute, false) != true
	not unknown(rc, attribute)
	msg := sprintf("%s is stored unencrypted (%s is not true)", [rc.address, attribute])
}

# A value known only after apply (`after_unknown`) is not judged.
unknown(rc, attribute) if rc.change.after_unknown[attribute] == true
