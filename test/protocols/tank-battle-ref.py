# Runs the reference implementation's own Tank Battle functions (its hooks.py) for
# test/protocols/tank-battle.test.ts to compare with ours. argv[1]: the reference's src directory.
# stdin: {"default_map": true} | {"map": text, "rules": {...}, "ticks": [[host_cmds, guest_cmds], ...]}
#        | {"validate": [[side, commands, world, target_tick], ...]}
#        | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import importlib.util, json, os, sys

# The batch protocol and deep copy shared by these scripts (reference_batch.py beside them; no __pycache__ there).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode
from reference_batch import serve  # noqa: E402
sys.dont_write_bytecode = _writes

root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "tank", f"{root}/aigenora/protocols/24765ced/b54ad04ad234c8d5a65f56825fedecb1f12cd296a175d658cb4c802d/hooks.py")
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)


def run(req):
    if req.get("default_map"):
        return json.dumps(h.DEFAULT_MAP)
    if "validate" in req:
        hooks = h.Hooks.__new__(h.Hooks)
        out = []
        for side, commands, world, target_tick in req["validate"]:
            try:
                out.append({"ok": hooks.proto_realtime_validate_commands(side, commands, world, target_tick)})
            except ValueError as e:
                out.append({"error": str(e)})
        return json.dumps(out)
    world = h.init_world(h.parse_map(req["map"]), req["rules"]["team_size"], req["rules"])
    out = [h.world_to_json(world)]
    for host, guest in req["ticks"]:
        world = h.sim_step(world, host, guest)
        out.append(h.world_to_json(world))
    return json.dumps(out)


serve(run)
