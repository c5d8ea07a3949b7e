# Kubernetes manifests (one document as input, as conftest reads them): privileged
# containers and hostPath volumes are denied, images without a tag or tagged latest warn.
package iac_code.kubernetes

workloads := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}

pod_specs contains input.spec if input.kind == "Pod"

pod_specs contains input.spec.template.spec if input.kind in workloads

pod_specs contains input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

containers contains c if {
	some spec in pod_specs
	some key in ["initContainers", "containers", "ephemeralContainers"]
	some c in object.get(spec, key, [])
}

name := sprintf("%s %s", [input.kind, object.get(object.get(input, "metadata", {}), "name", "(unnamed)")])

deny contains msg if {
	privileged_on
	some c in containers
	c.securityContext.privileged == true
	msg := sprintf("%s: container %s is privileged", [name, c.name])
}

deny contains msg if {
	host_path_on
	some spec in pod_specs
	some volume in object.get(spec, "volumes", [])
	volume.hostPath
	msg := sprintf("%s: volume %s mounts the host's %s (hostPath)", [name, volume.name, object.get(volume.hostPath, "path", "path")])
}

warn contains msg if {
	latest_on
	some c in containers
	untagged(c.image)
	msg := sprintf("%s: container %s runs %s without a tag (latest)", [name, c.name, c.image])
}

warn contains msg if {
	latest_on
	some c in containers
	endswith(c.image, ":latest")
	msg := sprintf("%s: container %s runs %s", [name, c.name, c.image])
}

untagged(image) if {
	not contains(image, "@")
	parts := split(image, "/")
	not contains(parts[count(parts) - 1], ":")
}

# Each of the three checks is a rule of its own in settings (data.iac_code.off).
privileged_on if not data.iac_code.off.privileged_container

host_path_on if not data.iac_code.off.host_path

latest_on if not data.iac_code.off.latest_image
