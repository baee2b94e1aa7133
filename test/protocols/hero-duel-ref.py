# Runs the reference implementation's own Hero Duel hooks (its hooks.py) for
# test/protocols/hero-duel-reference.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"defaults": true}: its DEFAULT_BALANCE, and the join message a guest with no options sends
#      | {"options": {...}, "moves": [[host_move, guest_move], ...]}: the round_results its host's
#        proto_round_judge gives for those moves, round after round (it stops after game_over)
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import importlib.util, json, os, sys, tempfile
from pathlib import Path

# The batch protocol shared by these scripts (reference_batch.py beside them; no __pycache__ there).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode
from reference_batch import serve  # noqa: E402
sys.dont_write_bytecode = _writes

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "hero", f"{root}/aigenora/protocols/df2d0709/aa159798680cfcb7106d4d3b0a8eee002b5644044dc0ed0b8d06092a/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)


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
