# Proves a refactoring plan safe: lists every delete and replacement with Terraform's reason,
# every in-place update, forget, move and import, then prints `true` (exit status 0 with
# jq -e) only when nothing is deleted or replaced. Prints no attribute values.
# Usage: terraform show -json tfplan | jq -e -r -f zero-destroy.jq
[.resource_changes[]? | select(.change.actions | index("delete"))] as $lost
| ($lost[]
    | "DESTROYS \(.change.actions | join("+")) \(.address) because: \(.action_reason // "unknown")"),
  (.resource_changes[]? | select(.change.actions == ["update"]) | "updates \(.address)"),
  (.resource_changes[]? | select(.change.actions == ["forget"])
    | "forgets \(.address) (stays in the infrastructure)"),
  (.resource_changes[]? | select(.previous_address)
    | "moves \(.previous_address) to \(.address)"),
  (.resource_changes[]? | select(.change.importing) | "imports \(.address)"),
  ($lost | length == 0)
