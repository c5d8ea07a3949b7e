# Ingress from anywhere (0.0.0.0/0, ::/0) to SSH (22) or RDP (3389): denied.
package iac_code.open_admin_ports

admin_ports := [22, 3389]

anywhere := {"0.0.0.0/0", "::/0", "*", "Internet", "internet", "Any", "any"}

after(rc) := rc.change.after if {
	some action in rc.change.actions
	action in {"create", "update"}
}

deny contains msg if {
	some rc in input.resource_changes
	some rule in ingress_rules(rc)
	some source in rule.sources
	anywhere[source]
	some port in admin_ports
	rule.ports[port]
	msg := sprintf("%s opens port %d to %s", [rc.address, port, source])
}

# AWS: inline ingress blocks of a security group.
ingress_rules(rc) := {rule |
	some block in object.get(after(rc), "ingress", [])
	rule := {"sources": array.concat(nonull(block.cidr_blocks), nonull(block.ipv6_cidr_blocks)), "ports": aws_ports(block.protocol, block.from_port, block.to_port)}
} if rc.type in {"aws_security_group", "aws_default_security_group"}

ingress_rules(rc) := {rule |
	a := after(rc)
	a.type == "ingress"
	rule := {"sources": array.concat(nonull(a.cidr_blocks), nonull(a.ipv6_cidr_blocks)), "ports": aws_ports(a.protocol, a.from_port, a.to_port)}
} if rc.type == "aws_security_group_rule"

ingress_rules(rc) := {rule |
	a := after(rc)
	rule := {"sources": [s | some s in [a.cidr_ipv4, a.cidr_ipv6]; s != null], "ports": aws_ports(a.ip_protocol, object.get(a, "from_port", null), object.get(a, "to_port", null))}
} if rc.type == "aws_vpc_security_group_ingress_rule"

# Google Cloud: an ingress firewall's allowed ports. With no source ranges, tags or
# service accounts, Google Cloud takes the source to be 0.0.0.0/0.
ingress_rules(rc) := {rule |
	a := after(rc)
	object.get(a, "direction", "INGRESS") != "EGRESS"
	some allow in nonull(a.allow)
	rule := {"sources": gcp_sources(a), "ports": gcp_ports(allow)}
} if rc.type == "google_compute_firewall"

gcp_sources(a) := nonull(a.source_ranges) if count(nonull(object.get(a, "source_ranges", []))) > 0

gcp_sources(a) := ["0.0.0.0/0"] if {
	count(nonull(object.get(a, "source_ranges", []))) == 0
	count(nonull(object.get(a, "source_tags", []))) == 0
	count(nonull(object.get(a, "source_service_accounts", []))) == 0
}

gcp_sources(a) := [] if {
	count(nonull(object.get(a, "source_ranges", []))) == 0
	count(array.concat(nonull(object.get(a, "source_tags", [])), nonull(object.get(a, "source_service_accounts", [])))) > 0
}

# Azure: an inbound allow rule, on its own or inside a security group.
ingress_rules(rc) := {rule |
	some r in azure_rules(rc)
	r.direction == "Inbound"
	r.access == "Allow"
	rule := {"sources": array.concat([object.get(r, "source_address_prefix", null)], nonull(object.get(r, "source_address_prefixes", []))), "ports": azure_ports(r)}
} if startswith(rc.type, "azurerm_network_security_")

azure_rules(rc) := [after(rc)] if rc.type == "azurerm_network_security_rule"

azure_rules(rc) := nonull(after(rc).security_rule) if rc.type == "azurerm_network_security_group"

nonull(x) := [] if x == null

nonull(x) := x if x != null

all_ports := {p | some p in admin_ports}

aws_ports(protocol, _, _) := all_ports if protocol in {"-1", "all"}

aws_ports(protocol, from, to) := {p | some p in admin_ports; from <= p; p <= to} if {
	not protocol in {"-1", "all"}
	from != null
	to != null
}

gcp_ports(allow) := all_ports if allow.protocol == "all"

gcp_ports(allow) := all_ports if {
	allow.protocol != "all"
	count(nonull(object.get(allow, "ports", []))) == 0
}

gcp_ports(allow) := {p | some spec in allow.ports; some p in admin_ports; covers(spec, p)} if {
	allow.protocol != "all"
	count(nonull(object.get(allow, "ports", []))) > 0
}

azure_ports(r) := {p |
	some spec in array.concat([object.get(r, "destination_port_range", null)], nonull(object.get(r, "destination_port_ranges", [])))
	spec != null
	some p in admin_ports
	covers(spec, p)
}

covers(spec, _) if spec == "*"

covers(spec, p) if {
	spec != "*"
	not contains(spec, "-")
	to_number(spec) == p
}

covers(spec, p) if {
	parts := split(spec, "-")
	count(parts) == 2
	to_number(parts[0]) <= p
	p <= to_number(parts[1])
}
