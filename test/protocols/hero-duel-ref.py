# Runs the reference implementation's own Hero Duel hooks (its hooks.py) for
# test/protocols/hero-duel-reference.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"defaults": true}: its DEFAULT_BALANCE, and the join message a guest with no options sends
#      | {"options": {...}, "moves": [[host_move, guest_move], ...]}: the round_results its host's
#        proto_round_judge gives for those moves, round after round (it stops after game_over)
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys, tempfile
from pathlib import Path

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import load_hooks, serve  # noqa: E402

h = load_hooks("hero", "df2d0709/aa159798680cfcb7106d4d3b0a8eee002b5644044dc0ed0b8d06092a")


def hooks(options, role, d):
    x = h.Hooks()
    x.proto_init(options, role, [], Path(d), None)
    return x


def run(req):
    with tempfile.TemporaryDirectory() as d:
        if req.get("defaults"):
            return json.dumps({"balance": h.DEFAULT_BALANCE, "join": hooks({}, "guest", d).proto_guest_join_message()})
        host = hooks(req["options"], "host", d)
        out = []
        for r, (hm, gm) in enumerate(req["moves"]):
            res = host.proto_round_judge(r, hm, gm, {})
            out.append(res.response)
            if res.completed:
                break
        return json.dumps(out)


serve(run)
