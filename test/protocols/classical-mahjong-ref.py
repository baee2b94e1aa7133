# Replays Classical Mahjong Core through the reference implementation's own hooks.py and Mahjong helpers
# and prints what they decide, for test/protocols/classical-mahjong.test.ts to compare with ours.
# argv[1]: the reference's src directory.
# stdin: {"options": {...}, "members": [...] (optional), "steps": [op...]} where op is
#   {"op": "act", "actor": pk, "action": {...}}   -> {"state", "events", "completed", "outcome"} | {"error"}
#   {"op": "view", "viewer": pk}                    -> {"view"}
#   {"op": "set_state", "state": {...}}             -> {"ok": true} (a hand-built table)
#   {"op": "snapshot"}                              -> {"snapshot"}
#   {"op": "restore", "checkpoint": {...}, "members": [...]} -> {"state"} | {"error"}
#   {"op": "leader_changed", "old": pk, "new": pk}  -> {"state", "events"}
#   {"op": "win_kind", "tiles": [...], "meld_count": n} -> {"result"} | {"error"}
#   {"op": "patterns", "tiles": [...], "win_kind": k, "meld_kinds": [...], "self_draw": b, "concealed": b}
#   {"op": "chow", "hand": [...], "discard": {...}} -> {"result"} | {"error"}
# An initial state that the reference refuses prints {"error"} first.
import copy, importlib.util, json, sys

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "mahjong_hooks", f"{root}/aigenora/protocols/b4b52ae5/92fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
from aigenora.proto.mahjong import chow_sequences, classical_core_patterns, mahjong_win_kind

req = json.load(sys.stdin)
hooks = h.Hooks.__new__(h.Hooks)
hooks.options = req.get("options", {})
members = {m["public_key"]: m for m in req.get("members", [])}
out = []
state = None
if req.get("members"):
    try:
        state = hooks.proto_group_initial_state(req["members"])
        out.append(copy.deepcopy({"state": state}))
    except ValueError as e:
        out.append({"error": str(e)})
for step in req.get("steps", []):
    op = step["op"]
    try:
        if op == "act":
            r = hooks.proto_group_handle(copy.deepcopy(state), members[step["actor"]], step["action"])
            state = r["state"]
            out.append(copy.deepcopy({"state": state, "events": r.get("events", []),
                                      "completed": r.get("completed", False), "outcome": r.get("outcome")}))
        elif op == "view":
            out.append(copy.deepcopy({"view": hooks.proto_group_view(state, members[step["viewer"]])}))
        elif op == "set_state":
            state = step["state"]
            out.append({"ok": True})
        elif op == "snapshot":
            out.append(copy.deepcopy({"snapshot": hooks.proto_group_recovery_snapshot(state)}))
        elif op == "restore":
            state = hooks.proto_group_restore(step["checkpoint"], step["members"], 2)
            out.append(copy.deepcopy({"state": state}))
        elif op == "leader_changed":
            r = hooks.proto_group_on_leader_changed(state, step["old"], step["new"])
            state = r["state"]
            out.append(copy.deepcopy({"state": state, "events": r.get("events", [])}))
        elif op == "win_kind":
            out.append({"result": mahjong_win_kind(step["tiles"], meld_count=step["meld_count"])})
        elif op == "patterns":
            out.append({"result": classical_core_patterns(
                step["tiles"], win_kind=step["win_kind"], meld_kinds=step["meld_kinds"],
                self_draw=step["self_draw"], concealed=step["concealed"])})
        elif op == "chow":
            out.append({"result": chow_sequences(step["hand"], step["discard"])})
        else:
            raise SystemExit(f"unknown op {op}")
    except ValueError as e:
        out.append({"error": str(e)})
print(json.dumps(out))
