# Runs the reference implementation's Four-player Landlord hooks (its hooks.py) for
# test/protocols/landlord.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"classify": [[face, ...], ...]}
#      | {"options": {...}, "members": [...], "actions": [[actor, action], ...]}: replays the actions from
#        the initial state and prints, after each step, the result or the refusal and every member's view.
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import importlib.util, json, os, sys

# The batch protocol and deep copy shared by these scripts (reference_batch.py beside them; no __pycache__ there).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode
from reference_batch import deepcopy, serve  # noqa: E402
sys.dont_write_bytecode = _writes

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "landlord", f"{root}/aigenora/protocols/bbc0d989/0d6481c3cd269fbfb466a3b7830e9d102638a14f2b7ddbae9da70d36/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)


def run(req):
    hooks = h.Hooks.__new__(h.Hooks)
    hooks.options = req.get("options", {})
    if "classify" in req:
        out = []
        for cards in req["classify"]:
            try:
                out.append({"ok": hooks._classify(cards)})
            except ValueError as e:
                out.append({"error": str(e)})
        return json.dumps(out)
    members = req["members"]
    state = hooks.proto_group_initial_state(members)
    views = lambda s: [hooks.proto_group_view(s, m) for m in members]
    out = [{"state": state, "views": views(state)}]
    for actor, action in req["actions"]:
        try:
            r = hooks.proto_group_handle(deepcopy(state), actor, action)
            state = r["state"]
            out.append({"state": state, "events": r.get("events", []), "completed": r.get("completed", False),
                        "outcome": r.get("outcome"), "views": views(state)})
        except ValueError as e:
            out.append({"error": str(e)})
    return json.dumps(out)


serve(run)
