# The configuration before the refactor. Apply it first (local state, offline), then put
# after/ in its place: the plan must show moves, an import and a forget, and no destroy.

resource "terraform_data" "web" {
  input = "web"
}

resource "terraform_data" "worker" {
  count = 2
  input = "worker-${count.index}"
}

resource "terraform_data" "legacy" {
  input = "legacy"
}
