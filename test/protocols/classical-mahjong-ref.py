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
import os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import bare_hooks, load_hooks, run_steps, serve  # noqa: E402

h = load_hooks("mahjong_hooks", "b4b52ae5/92fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01")
from aigenora.proto.mahjong import chow_sequences, classical_core_patterns, mahjong_win_kind



def run(req):
    hooks = bare_hooks(h, req)

    def own(state, step):
        op = step["op"]
        if op == "set_state":
            return step["state"], {"ok": True}
        if op == "restore":
            state = hooks.proto_group_restore(step["checkpoint"], step["members"], 2)
            return state, {"state": state}
        if op == "win_kind":
            return state, {"result": mahjong_win_kind(step["tiles"], meld_count=step["meld_count"])}
        if op == "patterns":
            return state, {"result": classical_core_patterns(
                step["tiles"], win_kind=step["win_kind"], meld_kinds=step["meld_kinds"],
                self_draw=step["self_draw"], concealed=step["concealed"])}
        if op == "chow":
            return state, {"result": chow_sequences(step["hand"], step["discard"])}
        raise SystemExit(f"unknown op {op}")

    return run_steps(hooks, req, own)


serve(run)
