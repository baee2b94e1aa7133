# Shared by the *-ref.py scripts beside it (Python puts a script's own folder on its path): the batch protocol
# of reference-batch.ts, and the deep copy the scripts hand the reference's hooks, as its group leader does.
#
# serve(run): stdin is one request, answered with run(request) (the script's JSON text for it); or
# {"batch": [request, ...]}, answered one line per request: {"ok": <run(request)>} or {"crash": <traceback>},
# so that a request a script fails on fails only the test that asked it.
import copy, json, sys, traceback

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
