# Replays a Hold'em match through the reference implementation's own hooks.py and prints what they
# decide, for test/protocols/texas-holdem.test.ts to compare with ours.
# stdin: {"options": {...}, "members": [...], "steps": [op...]} where op is
#   {"op": "act", "actor": pk, "action": {...}} | {"op": "view", "viewer": pk}
#   | {"op": "restore", "checkpoint": {...}, "members": [...]} | {"op": "rank", "cards": [...]}
#   | {"op": "pots", "contributions": {...}, "folded": [...]}
# stdout: one JSON result per step: {"state"...} / {"error": text} / {"view": ...} / ...
import copy, importlib.util, json, sys

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "h", f"{root}/aigenora/protocols/ba17afdc/eb178d206e7f3ba614b29751f36ec749f3039fa471995707f6fd66c7/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
from aigenora.proto.poker import best_poker_hand, build_side_pots, normalize_uncalled_contributions

req = json.load(sys.stdin)
hooks = h.Hooks()
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
    try:
        if step["op"] == "act":
            r = hooks.proto_group_handle(state, members[step["actor"]], step["action"])
            state = r["state"]
            out.append(copy.deepcopy({"state": state, "events": r.get("events", []), "completed": r.get("completed", False), "outcome": r.get("outcome")}))
        elif step["op"] == "view":
            out.append(copy.deepcopy({"view": hooks.proto_group_view(state, members[step["viewer"]])}))
        elif step["op"] == "restore":
            state = hooks.proto_group_restore(step["checkpoint"], step["members"], 2)
            out.append(copy.deepcopy({"state": state}))
        elif step["op"] == "rank":
            out.append({"rank": best_poker_hand(step["cards"])})
        elif step["op"] == "pots":
            n = normalize_uncalled_contributions(step["contributions"])
            out.append({"normalized": n, "pots": build_side_pots(n["contributions"], step["folded"])})
    except ValueError as e:
        out.append({"error": str(e)})
print(json.dumps(out))
