package iac_code.open_admin_ports

plan(type, after) := {"resource_changes": [{"address": sprintf("%s.x", [type]), "type": type, "change": {"actions": ["create"], "after": after}}]}

test_aws_ssh_from_anywhere_is_denied if {
	deny == {"aws_security_group.x opens port 22 to 0.0.0.0/0"} with input as plan("aws_security_group", {"ingress": [{"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": ["0.0.0.0/0"], "ipv6_cidr_blocks": null}]})
}

test_aws_rule_over_a_range_with_ipv6_is_denied if {
	count(deny) == 1 with input as plan("aws_security_group_rule", {"type": "ingress", "protocol": "tcp", "from_port": 3000, "to_port": 4000, "cidr_blocks": null, "ipv6_cidr_blocks": ["::/0"]})
}

test_aws_https_from_anywhere_is_allowed if {
	count(deny) == 0 with input as plan("aws_security_group", {"ingress": [{"protocol": "tcp", "from_port": 443, "to_port": 443, "cidr_blocks": ["0.0.0.0/0"], "ipv6_cidr_blocks": null}]})
}

test_aws_ssh_from_the_office_is_allowed if {
	count(deny) == 0 with input as plan("aws_vpc_security_group_ingress_rule", {"ip_protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_ipv4": "203.0.113.0/24", "cidr_ipv6": null})
}

test_gcp_rdp_from_anywhere_is_denied if {
	count(deny) == 1 with input as plan("google_compute_firewall", {"direction": "INGRESS", "source_ranges": ["0.0.0.0/0"], "allow": [{"protocol": "tcp", "ports": ["3389"]}]})
}

test_azure_any_port_from_internet_is_denied_twice if {
	count(deny) == 2 with input as plan("azurerm_network_security_rule", {"direction": "Inbound", "access": "Allow", "source_address_prefix": "Internet", "destination_port_range": "*"})
}

test_azure_deny_rules_are_not_openings if {
	count(deny) == 0 with input as plan("azurerm_network_security_rule", {"direction": "Inbound", "access": "Deny", "source_address_prefix": "*", "destination_port_range": "22"})
}

test_the_default_security_group_is_judged_too if {
	count(deny) == 2 with input as plan("aws_default_security_group", {"ingress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"], "ipv6_cidr_blocks": null}]})
}

test_a_google_firewall_without_sources_is_open_to_anywhere if {
	deny == {"google_compute_firewall.x opens port 22 to 0.0.0.0/0"} with input as plan("google_compute_firewall", {"direction": "INGRESS", "allow": [{"protocol": "tcp", "ports": ["22"]}], "source_ranges": null})
	count(deny) == 0 with input as plan("google_compute_firewall", {"direction": "INGRESS", "allow": [{"protocol": "tcp", "ports": ["22"]}], "source_ranges": null, "source_tags": ["bastion"]})
}
