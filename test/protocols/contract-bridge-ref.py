# Replays a Contract Bridge board through the reference implementation's own hooks.py and prints what
# they decide, for test/protocols/contract-bridge.test.ts to compare with ours. argv[1]: the reference's src.
# stdin: {"options": {...}, "members": [...], "steps": [op...]} where op is
#   {"op": "act", "actor": pk, "action": {...}} | {"op": "try", ...as act, never kept: {"error": text or "accepted"}}
#   | {"op": "view", "viewer": pk}
#   | {"op": "snapshot"} | {"op": "restore", "checkpoint": {...}}
#   | {"op": "leader_changed", "old": pk, "new": pk} | {"op": "score", ...duplicate score arguments}
# stdout: one JSON result per step (the first is the initial state): {"state", "events", "completed",
# "outcome"} / {"error": text} / {"view": ...} / {"snapshot": ...} / {"score": n}
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
    "bridge", f"{root}/aigenora/protocols/5d69cf0e/7ff90b2b60191fb43ab2448d0bf9153555b827199c1d77bc3ea78f3e/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

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
        try:
            op = step["op"]
            if op == "act":
                # On a copy, as a leader does: a refusal leaves the state untouched.
                r = hooks.proto_group_handle(deepcopy(state), members[step["actor"]], step["action"])
                state = r["state"]
                out.append(dumps({"state": state, "events": r.get("events", []), "completed": r.get("completed", False), "outcome": r.get("outcome")}))
            elif op == "try":
                try:
                    hooks.proto_group_handle(deepcopy(state), members[step["actor"]], step["action"])
                    out.append(dumps({"error": "accepted"}))
                except ValueError as e:
                    out.append(dumps({"error": str(e)}))
            elif op == "view":
                out.append(dumps({"view": hooks.proto_group_view(state, members[step["viewer"]])}))
            elif op == "snapshot":
                out.append(dumps({"snapshot": hooks.proto_group_recovery_snapshot(state)}))
            elif op == "restore":
                state = hooks.proto_group_restore(step["checkpoint"], req["members"], 2)
                out.append(dumps({"state": state}))
            elif op == "leader_changed":
                r = hooks.proto_group_on_leader_changed(state, step["old"], step["new"])
                state = r["state"]
                out.append(dumps({"state": state, "events": r.get("events", [])}))
            elif op == "score":
                args = {k: v for k, v in step.items() if k != "op"}
                out.append(dumps({"score": hooks._duplicate_score(**args)}))
        except ValueError as e:
            out.append(dumps({"error": str(e)}))
    return "[" + ",".join(out) + "]"


serve(run)
