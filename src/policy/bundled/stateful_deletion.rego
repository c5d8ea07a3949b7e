# Deleting or replacing a resource that holds data (a database, a bucket, a disk, a file
# system, a KMS key, a DNS zone) on AWS, Google Cloud or Azure: a warning in the question.
package iac_code.stateful_deletion

stateful_types := {
	# AWS
	"aws_db_instance", "aws_rds_cluster", "aws_rds_cluster_instance", "aws_dynamodb_table",
	"aws_docdb_cluster", "aws_neptune_cluster", "aws_redshift_cluster",
	"aws_elasticache_cluster", "aws_elasticache_replication_group",
	"aws_opensearch_domain", "aws_elasticsearch_domain",
	"aws_s3_bucket", "aws_ebs_volume", "aws_efs_file_system",
	"aws_fsx_lustre_file_system", "aws_fsx_windows_file_system", "aws_fsx_ontap_file_system",
	"aws_kms_key", "aws_route53_zone", "aws_backup_vault",
	# Google Cloud
	"google_sql_database_instance", "google_sql_database", "google_spanner_instance",
	"google_spanner_database", "google_bigtable_instance", "google_bigquery_dataset",
	"google_bigquery_table", "google_redis_instance", "google_alloydb_cluster",
	"google_firestore_database", "google_storage_bucket", "google_compute_disk",
	"google_compute_region_disk", "google_filestore_instance", "google_kms_key_ring",
	"google_kms_crypto_key", "google_dns_managed_zone",
	# Azure
	"azurerm_mssql_server", "azurerm_mssql_database", "azurerm_postgresql_server",
	"azurerm_postgresql_flexible_server", "azurerm_mysql_flexible_server",
	"azurerm_cosmosdb_account", "azurerm_redis_cache", "azurerm_storage_account",
	"azurerm_storage_container", "azurerm_storage_share", "azurerm_managed_disk",
	"azurerm_netapp_volume", "azurerm_key_vault", "azurerm_key_vault_key",
	"azurerm_dns_zone", "azurerm_private_dns_zone",
}

warn contains msg if {
	some rc in input.resource_changes
	stateful_types[rc.type]
	"delete" in rc.change.actions
	msg := sprintf("%s (%s) would be %s: the data it holds may be lost", [rc.address, rc.type, verb(rc.change.actions)])
}

verb(actions) := "replaced" if "create" in actions

verb(actions) := "deleted" if not "create" in actions
