# Runs the reference implementation's Four-player Landlord hooks (its hooks.py) for
# test/protocols/landlord.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"classify": [[face, ...], ...]}
#      | {"options": {...}, "members": [...], "actions": [[actor, action], ...]}: replays the actions from
#        the initial state and prints, after each step, the result or the refusal and every member's view.
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import attempt, bare_hooks, load_hooks, replay, serve  # noqa: E402

h = load_hooks("landlord", "bbc0d989/0d6481c3cd269fbfb466a3b7830e9d102638a14f2b7ddbae9da70d36")


def run(req):
    hooks = bare_hooks(h, req)
    if "classify" in req:
        return json.dumps([attempt(lambda: hooks._classify(cards)) for cards in req["classify"]])
    members = req["members"]
    state = hooks.proto_group_initial_state(members)
    views = lambda s: [hooks.proto_group_view(s, m) for m in members]
    out = [{"state": state, "views": views(state)}]
    out += replay(hooks, state, req["actions"], views)[0]
    return json.dumps(out)


serve(run)
