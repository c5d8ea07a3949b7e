package iac_code.kubernetes

pod(container) := {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [container]}}

test_a_privileged_pod_is_denied if {
	deny == {"Pod web: container app is privileged"} with input as pod({"name": "app", "image": "nginx:1.27", "securityContext": {"privileged": true}})
}

test_a_host_path_in_a_deployment_is_denied if {
	doc := {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "busybox:1.36"}], "volumes": [{"name": "root", "hostPath": {"path": "/"}}]}}}}
	count(deny) == 1 with input as doc
}

test_latest_and_untagged_images_warn if {
	count(warn) == 1 with input as pod({"name": "a", "image": "nginx:latest"})
	count(warn) == 1 with input as pod({"name": "a", "image": "registry.local:5000/team/nginx"})
	count(warn) == 0 with input as pod({"name": "a", "image": "nginx@sha256:0123"})
	count(warn) == 0 with input as pod({"name": "a", "image": "registry.local:5000/nginx:1.27"})
}

test_a_rule_switched_off_is_silent if {
	count(deny) == 0 with input as pod({"name": "app", "image": "nginx:1.27", "securityContext": {"privileged": true}}) with data.iac_code.off.privileged_container as true
}

test_a_terraform_plan_is_not_a_manifest if {
	count(deny) + count(warn) == 0 with input as {"resource_changes": []}
}
