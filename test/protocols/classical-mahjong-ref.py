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
# Or stdin: {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
# Each result is written out as it is made (json.dumps at that moment is the copy a later step cannot touch).
import importlib.util, json, os, sys

# The batch protocol and deep copy shared by these scripts (reference_batch.py beside them; no __pycache__ there).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode
from reference_batch import deepcopy, serve  # noqa: E402
sys.dont_write_bytecode = _writes

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "mahjong_hooks", f"{root}/aigenora/protocols/b4b52ae5/92fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
from aigenora.proto.mahjong import chow_sequences, classical_core_patterns, mahjong_win_kind

dumps = json.dumps


def run(req):
    hooks = h.Hooks.__new__(h.Hooks)
    hooks.options = req.get("options", {})
    members = {m["public_key"]: m for m in req.get("members", [])}
    out = []
    state = None
    if req.get("members"):
        try:
            state = hooks.proto_group_initial_state(req["members"])
            out.append(dumps({"state": state}))
        except ValueError as e:
            out.append(dumps({"error": str(e)}))
    for step in req.get("steps", []):
        op = step["op"]
        try:
            if op == "act":
                r = hooks.proto_group_handle(deepcopy(state), members[step["actor"]], step["action"])
                state = r["state"]
                out.append(dumps({"state": state, "events": r.get("events", []),
                                  "completed": r.get("completed", False), "outcome": r.get("outcome")}))
            elif op == "view":
                out.append(dumps({"view": hooks.proto_group_view(state, members[step["viewer"]])}))
            elif op == "set_state":
                state = step["state"]
                out.append(dumps({"ok": True}))
            elif op == "snapshot":
                out.append(dumps({"snapshot": hooks.proto_group_recovery_snapshot(state)}))
            elif op == "restore":
                state = hooks.proto_group_restore(step["checkpoint"], step["members"], 2)
                out.append(dumps({"state": state}))
            elif op == "leader_changed":
                r = hooks.proto_group_on_leader_changed(state, step["old"], step["new"])
                state = r["state"]
                out.append(dumps({"state": state, "events": r.get("events", [])}))
            elif op == "win_kind":
                out.append(dumps({"result": mahjong_win_kind(step["tiles"], meld_count=step["meld_count"])}))
            elif op == "patterns":
                out.append(dumps({"result": classical_core_patterns(
                    step["tiles"], win_kind=step["win_kind"], meld_kinds=step["meld_kinds"],
                    self_draw=step["self_draw"], concealed=step["concealed"])}))
            elif op == "chow":
                out.append(dumps({"result": chow_sequences(step["hand"], step["discard"])}))
            else:
                raise SystemExit(f"unknown op {op}")
        except ValueError as e:
            out.append(dumps({"error": str(e)}))
    return "[" + ",".join(out) + "]"


serve(run)
