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
import os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import bare_hooks, deepcopy, load_hooks, run_steps, serve  # noqa: E402

h = load_hooks("bridge", "5d69cf0e/7ff90b2b60191fb43ab2448d0bf9153555b827199c1d77bc3ea78f3e")



def run(req):
    hooks = bare_hooks(h, req)
    members = {m["public_key"]: m for m in req.get("members", [])}

    def own(state, step):
        op = step["op"]
        if op == "try":
            # A refusal is answered as the refusal of any step.
            hooks.proto_group_handle(deepcopy(state), members[step["actor"]], step["action"])
            return state, {"error": "accepted"}
        if op == "restore":
            state = hooks.proto_group_restore(step["checkpoint"], req["members"], 2)
            return state, {"state": state}
        if op == "score":
            args = {k: v for k, v in step.items() if k != "op"}
            return state, {"score": hooks._duplicate_score(**args)}
        return state, None

    return run_steps(hooks, req, own)


serve(run)
