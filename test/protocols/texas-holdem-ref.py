# Replays a Hold'em match through the reference implementation's own hooks.py and prints what they
# decide, for test/protocols/texas-holdem.test.ts to compare with ours.
# stdin: {"options": {...}, "members": [...], "steps": [op...]} where op is
#   {"op": "act", "actor": pk, "action": {...}} | {"op": "view", "viewer": pk}
#   | {"op": "restore", "checkpoint": {...}, "members": [...]} | {"op": "rank", "cards": [...]}
#   | {"op": "pots", "contributions": {...}, "folded": [...]}
# stdout: one JSON result per step: {"state"...} / {"error": text} / {"view": ...} / ...
# Or stdin: {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import deepcopy, group_start, handled, load_hooks, serve  # noqa: E402

h = load_hooks("h", "ba17afdc/eb178d206e7f3ba614b29751f36ec749f3039fa471995707f6fd66c7")
from aigenora.proto.poker import best_poker_hand, build_side_pots, normalize_uncalled_contributions


def run(req):
    hooks = h.Hooks()
    hooks.options = req.get("options", {})
    members, state, out = group_start(hooks, req)
    for step in req.get("steps", []):
        try:
            if step["op"] == "act":
                r = hooks.proto_group_handle(state, members[step["actor"]], step["action"])
                state = r["state"]
                out.append(deepcopy(handled(r)))
            elif step["op"] == "view":
                out.append(deepcopy({"view": hooks.proto_group_view(state, members[step["viewer"]])}))
            elif step["op"] == "restore":
                state = hooks.proto_group_restore(step["checkpoint"], step["members"], 2)
                out.append(deepcopy({"state": state}))
            elif step["op"] == "rank":
                out.append({"rank": best_poker_hand(step["cards"])})
            elif step["op"] == "pots":
                n = normalize_uncalled_contributions(step["contributions"])
                out.append({"normalized": n, "pots": build_side_pots(n["contributions"], step["folded"])})
        except ValueError as e:
            out.append({"error": str(e)})
    return json.dumps(out)


serve(run)
