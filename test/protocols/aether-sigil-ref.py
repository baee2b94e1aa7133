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
# Or stdin: {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
# Each result is written out as it is made (json.dumps at that moment is the copy a later step cannot touch).
import json, os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import bare_hooks, deepcopy, handled, load_hooks, serve  # noqa: E402

h = load_hooks("aether", "cbdb124e/0db9be540099dbb7f7229bd9075251b5d6838f1ea943083d631570c5")

dumps = json.dumps


def run(req):
    hooks = bare_hooks(h, req)
    state = None
    out = []
    for step in req["steps"]:
        op = step["op"]
        try:
            if op == "init":
                state = hooks.proto_group_initial_state(deepcopy(step["members"]))
                out.append(dumps({"state": state}))
            elif op == "act":
                r = hooks.proto_group_handle(deepcopy(state), step["actor"], step["action"])
                state = r["state"]
                out.append(dumps(handled(r)))
            elif op == "views":
                out.append(dumps({"views": [hooks.proto_group_view(state, m) for m in step["members"]]}))
            elif op == "snapshot":
                out.append(dumps({"snapshot": hooks.proto_group_recovery_snapshot(state)}))
            elif op == "restore":
                state = hooks.proto_group_restore(step["checkpoint"], deepcopy(step["members"]), 2)
                out.append(dumps({"state": state}))
            elif op == "leader_changed":
                r = hooks.proto_group_on_leader_changed(deepcopy(state), step["old"], step["new"])
                state = r["state"]
                out.append(dumps({"state": state, "events": r.get("events", [])}))
            elif op == "load":
                state = deepcopy(step["state"])
                out.append(dumps({"state": state}))
            else:
                raise SystemExit(f"unknown op {op}")
        except ValueError as e:
            out.append(dumps({"error": str(e)}))
    return "[" + ",".join(out) + "]"


serve(run)
