# What a saved Terraform plan will do, one line per change, without any attribute value:
# addresses, actions, Terraform's reason for each delete or replacement, the attributes that
# force a replacement, moves, imports, drift, and output names (never their values).
# Usage: terraform show -json tfplan | jq -r -f plan-summary.jq
def kind:
  if . == ["create"] then "create"
  elif . == ["update"] then "update"
  elif . == ["delete", "create"] then "replace (destroy, then create)"
  elif . == ["create", "delete"] then "replace (create, then destroy)"
  elif . == ["delete"] then "delete"
  elif . == ["forget"] then "forget (kept, no longer managed)"
  elif . == ["read"] then "read"
  elif . == ["no-op"] then "no-op"
  else join("+") end;
def forces:
  [(.change.replace_paths // [])[] | map(tostring) | join(".")]
  | if length > 0 then " forced by: " + join(", ") else "" end;
def reason:
  if .action_reason then " because: " + .action_reason else "" end;
def moved:
  if .previous_address then " moved from: " + .previous_address else "" end;
def imported:
  if .change.importing then " imported" else "" end;
def counted(a):
  [.resource_changes[]? | select(.change.actions | a)] | length;

"terraform " + (.terraform_version // "?")
  + ", applyable: " + (if has("applyable") then .applyable | tostring else "unknown" end)
  + ", complete: " + (if has("complete") then .complete | tostring else "unknown" end),
(.resource_changes[]?
  | select(.change.actions != ["no-op"] or .previous_address or .change.importing)
  | "\(.change.actions | kind) \(.address)\(reason)\(forces)\(moved)\(imported)"),
(.resource_drift[]?
  | "drift \(.change.actions | kind) \(.address) (changed outside Terraform)"),
(.output_changes // {} | to_entries[]
  | select(.value.actions != ["no-op"])
  | "output \(.value.actions | kind) \(.key)"
    + (if .value.after_sensitive == true or .value.before_sensitive == true
       then " (sensitive)" else "" end)),
"totals: \(counted(. == ["create"])) create, \(counted(. == ["update"])) update, "
  + "\(counted(length == 2)) replace, \(counted(. == ["delete"])) delete, "
  + "\(counted(. == ["forget"])) forget, \([.resource_drift[]?] | length) drifted"
