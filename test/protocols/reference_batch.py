# Shared by the *-ref.py scripts beside it (Python puts a script's own folder on its path): the loading of the
# reference's hooks, the batch protocol of reference-batch.ts, the steps the group scripts share, and the
# deep copy the scripts hand the reference's hooks, as its group leader does.
#
# A script sets sys.dont_write_bytecode before it imports this module, so that no __pycache__ is written
# beside the scripts; this module sets it back to what python3 started with (sys.flags), so that the
# reference's own modules are cached as usual. (Its own bytecode is written or not before its body runs.)
#
# load_hooks(name, folder): the reference's hooks.py of the built-in in aigenora/protocols/<folder> below
# argv[1] (the reference's src directory, which goes first on the path so that its own imports resolve).
#
# serve(run): stdin is one request, answered with run(request) (the script's JSON text for it); or
# {"batch": [request, ...]}, answered one line per request: {"ok": <run(request)>} or {"crash": <traceback>},
# so that a request a script fails on fails only the test that asked it.
import copy, importlib.util, json, sys, traceback

sys.dont_write_bytecode = bool(sys.flags.dont_write_bytecode)

_ATOMIC = frozenset((str, int, float, bool, type(None)))


def deepcopy(x, memo=None):
    """copy.deepcopy(x), quicker on the dicts and lists of JSON-like states: each dict and list copied once
    (shared ones stay shared, as copy.deepcopy's memo keeps them), str/int/float/bool/None kept, anything
    else (tuples, other types) left to copy.deepcopy with the same memo."""
    t = type(x)
    if t in _ATOMIC:
        return x
    if memo is None:
        memo = {}
    y = memo.get(id(x))
    if y is not None:
        return y
    if t is dict:
        y = {}
        memo[id(x)] = y
        for k, v in x.items():
            y[k if type(k) in _ATOMIC else deepcopy(k, memo)] = v if type(v) in _ATOMIC else deepcopy(v, memo)
        return y
    if t is list:
        y = []
        memo[id(x)] = y
        for v in x:
            y.append(v if type(v) in _ATOMIC else deepcopy(v, memo))
        return y
    return copy.deepcopy(x, memo)


def load_hooks(name, folder):
    root = sys.argv[1]
    if sys.path[0] != root:
        sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location(name, f"{root}/aigenora/protocols/{folder}/hooks.py")
    h = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h)
    return h


def bare_hooks(h, req):
    """The reference's group Hooks without its constructor (which wants a session's files), holding the
    request's options, as a group leader's hooks hold the session's."""
    hooks = h.Hooks.__new__(h.Hooks)
    hooks.options = req.get("options", {})
    return hooks


def group_start(hooks, req):
    """A group request's members by public key, the state it starts from and its first outputs: with
    "members", the initial state of those members (a copy, which later steps cannot touch) or the
    reference's refusal of them; without, no state and no output."""
    members = {m["public_key"]: m for m in req.get("members", [])}
    if not req.get("members"):
        return members, None, []
    try:
        state = hooks.proto_group_initial_state(req["members"])
        return members, state, [deepcopy({"state": state})]
    except ValueError as e:
        return members, None, [{"error": str(e)}]


def attempt(fn):
    """{"ok": fn()}, or {"error": <its text>} where the reference refuses with a ValueError."""
    try:
        return {"ok": fn()}
    except ValueError as e:
        return {"error": str(e)}


def replay(hooks, state, actions, views):
    """Each [actor, action] handled in turn, on a copy as a leader does (a refusal leaves the state as it
    was): the outputs, each result with views(its state) or the refusal, and the state they end in."""
    out = []
    for actor, action in actions:
        try:
            r = hooks.proto_group_handle(deepcopy(state), actor, action)
            state = r["state"]
            out.append(handled(r, views=views(state)))
        except ValueError as e:
            out.append({"error": str(e)})
    return out, state


def group_op(hooks, state, step, members):
    """The ops the group scripts share, on `state`, each actor and viewer a public key of `members`:
    (the state after the op, its output), or None for an op of the script's own. An act runs on a copy, as
    a leader's does: a refusal leaves the state as it was."""
    op = step["op"]
    if op == "act":
        r = hooks.proto_group_handle(deepcopy(state), members[step["actor"]], step["action"])
        return r["state"], handled(r)
    if op == "view":
        return state, {"view": hooks.proto_group_view(state, members[step["viewer"]])}
    if op == "snapshot":
        return state, {"snapshot": hooks.proto_group_recovery_snapshot(state)}
    if op == "leader_changed":
        r = hooks.proto_group_on_leader_changed(state, step["old"], step["new"])
        return r["state"], {"state": r["state"], "events": r.get("events", [])}
    return None


def run_steps(hooks, req, own):
    """The output of a group request {"members"?, "steps": [...]}, as JSON text: group_start's, then one a
    step, the shared ops' by group_op and the script's own by own(state, step) -> (state, output or None
    for none); a refusal (ValueError) is {"error": text} and leaves the state as it was. Each output is
    written out as it is made (json.dumps at that moment is the copy a later step cannot touch)."""
    members, state, first = group_start(hooks, req)
    out = [json.dumps(o) for o in first]
    for step in req.get("steps", []):
        try:
            state, result = group_op(hooks, state, step, members) or own(state, step)
            if result is not None:
                out.append(json.dumps(result))
        except ValueError as e:
            out.append(json.dumps({"error": str(e)}))
    return "[" + ",".join(out) + "]"


def handled(r, **more):
    """What a proto_group_handle result says, as the scripts print it: its state, events, completion and
    outcome, then `more`."""
    return {"state": r["state"], "events": r.get("events", []), "completed": r.get("completed", False), "outcome": r.get("outcome"), **more}


def serve(run):
    req = json.load(sys.stdin)
    if "batch" not in req:
        print(run(req))
        return
    for one in req["batch"]:
        try:
            line = '{"ok":' + run(one) + "}"
        except (Exception, SystemExit):
            line = json.dumps({"crash": traceback.format_exc()})
        sys.stdout.write(line + "\n")
