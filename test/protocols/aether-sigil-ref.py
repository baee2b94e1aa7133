# Replays Aether Sigil steps through the reference implementation's own hooks.py and prints what they
# decide, for test/protocols/aether-sigil.test.ts to compare with ours. argv[1]: the reference's src dir.
# stdin: {"options": {...}, "steps": [op...]} where op is
#   {"op": "init", "members": [...]}                        -> {"state": ...} | {"error": text}
#   {"op": "act", "actor": member, "action": {...}}         -> {"state", "events", "completed", "outcome"} | {"error"}
#   {"op": "views", "members": [...]}                       -> {"views": [...]}
#   {"op": "snapshot"}                                      -> {"snapshot": ...}
#   {"op": "restore", "checkpoint": {...}, "members": [...]} -> {"state": ...} | {"error"}
#   {"op": "leader_changed", "old": pk, "new": pk}          -> {"state", "events"}
#   {"op": "load", "state": {...}}                          -> {"state": ...} (a hand-built table)
# A refused action leaves the state as it was (the leader hands each hook a copy).
import copy, importlib.util, json, sys

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "aether", f"{root}/aigenora/protocols/cbdb124e/0db9be540099dbb7f7229bd9075251b5d6838f1ea943083d631570c5/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

req = json.load(sys.stdin)
hooks = h.Hooks.__new__(h.Hooks)
hooks.options = req.get("options", {})
state = None
out = []
for step in req["steps"]:
    op = step["op"]
    try:
        if op == "init":
            state = hooks.proto_group_initial_state(copy.deepcopy(step["members"]))
            out.append({"state": copy.deepcopy(state)})
        elif op == "act":
            r = hooks.proto_group_handle(copy.deepcopy(state), step["actor"], step["action"])
            state = r["state"]
            out.append(copy.deepcopy({"state": state, "events": r.get("events", []),
                                      "completed": r.get("completed", False), "outcome": r.get("outcome")}))
        elif op == "views":
            out.append(copy.deepcopy({"views": [hooks.proto_group_view(state, m) for m in step["members"]]}))
        elif op == "snapshot":
            out.append({"snapshot": copy.deepcopy(hooks.proto_group_recovery_snapshot(state))})
        elif op == "restore":
            state = hooks.proto_group_restore(step["checkpoint"], copy.deepcopy(step["members"]), 2)
            out.append({"state": copy.deepcopy(state)})
        elif op == "leader_changed":
            r = hooks.proto_group_on_leader_changed(copy.deepcopy(state), step["old"], step["new"])
            state = r["state"]
            out.append(copy.deepcopy({"state": state, "events": r.get("events", [])}))
        elif op == "load":
            state = copy.deepcopy(step["state"])
            out.append({"state": copy.deepcopy(state)})
        else:
            raise SystemExit(f"unknown op {op}")
    except ValueError as e:
        out.append({"error": str(e)})
print(json.dumps(out))
