# Runs the reference implementation's Upgrade (Tractor) hooks (its hooks.py and proto/tractor.py) for
# test/protocols/upgrade-tractor.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"rules": [{"op": "classify"|"follow"|"winner"|"strength", ...}, ...]}: the tractor helpers on hand-built cards
#      | {"options": {...}, "members": [...], "state"?: {...}, "actions": [[actor, action], ...], "failover": [old, new]?}:
#        replays the actions from the given or the initial state and prints, after each step, the result or the refusal and every
#        member's view; then, with "failover", the recovery snapshot, the restored state and the leader change.
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import attempt, bare_hooks, deepcopy, load_hooks, replay, serve  # noqa: E402

h = load_hooks("upgrade", "acdf9872/18b5382bbf5f4c0008d6766e97ca6c1ae12f3cf2becd2afa9ad6f88e")
from aigenora.proto import tractor


def run(req):
    hooks = bare_hooks(h, req)
    if "rules" in req:
        out = []
        for r in req["rules"]:
            ctx = {"level_rank": r["level_rank"], "trump_suit": r["trump_suit"]}
            if r["op"] == "classify":
                out.append(attempt(lambda: tractor.classify_tractor_play(r["cards"], **ctx)))
            elif r["op"] == "follow":
                out.append(attempt(lambda: tractor.validate_tractor_follow(r["hand"], r["cards"], r["lead"], **ctx)))
            elif r["op"] == "winner":
                out.append(attempt(lambda: hooks._trick_winner(r["trick"], ctx)))
            elif r["op"] == "strength":
                out.append(attempt(lambda: list(tractor.tractor_card_strength(r["card"], **ctx))))
        return json.dumps(out)
    members = req["members"]
    out = [{"ok": req["state"]} if "state" in req else attempt(lambda: hooks.proto_group_initial_state(members))]
    if "ok" in out[0]:
        state = out[0]["ok"]
        views = lambda s: [hooks.proto_group_view(s, m) for m in members]
        out[0] = {"state": state, "views": views(state)}
        steps, state = replay(hooks, state, req["actions"], views)
        out += steps
        if "failover" in req:
            snap = hooks.proto_group_recovery_snapshot(state)
            restored = hooks.proto_group_restore(deepcopy(snap), members, 1)
            old, new = req["failover"]
            changed = hooks.proto_group_on_leader_changed(restored, old, new)
            out.append({"snapshot": snap, "state": changed["state"], "events": changed["events"],
                        "views": views(changed["state"])})
    return json.dumps(out)


serve(run)
