# Runs the reference implementation's own Tank Battle functions (its hooks.py) for
# test/protocols/tank-battle.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"default_map": true} | {"map": text, "rules": {...}, "ticks": [[host_cmds, guest_cmds], ...]}
#        | {"validate": [[side, commands, world, target_tick], ...]}
#        | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import attempt, load_hooks, serve  # noqa: E402

h = load_hooks("tank", "24765ced/b54ad04ad234c8d5a65f56825fedecb1f12cd296a175d658cb4c802d")


def run(req):
    if req.get("default_map"):
        return json.dumps(h.DEFAULT_MAP)
    if "validate" in req:
        hooks = h.Hooks.__new__(h.Hooks)
        return json.dumps([attempt(lambda: hooks.proto_realtime_validate_commands(*c)) for c in req["validate"]])
    world = h.init_world(h.parse_map(req["map"]), req["rules"]["team_size"], req["rules"])
    out = [h.world_to_json(world)]
    for host, guest in req["ticks"]:
        world = h.sim_step(world, host, guest)
        out.append(h.world_to_json(world))
    return json.dumps(out)


serve(run)
