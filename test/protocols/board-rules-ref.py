# Replays board games through the reference implementation's own rule functions (its hooks.py) and
# prints what they decide, for test/protocols/board-rules.test.ts to compare with ours.
# stdin: {"game": "reversi"|"gomoku", "n": N, "moves": [[side, row, col] | [side, "pass"]], "selfplay": bool}
#      | {"game": "connect4", "cols": C, "rows": R, "frames": [{"from": side, "msg": {...}}, ...]}: the frames
#        of one of our games, answered with the reference's rulings on its stones ("rules") and with what the
#        reference's own host and guest Hooks send when they meet our guest's and our host's messages
#        ("host", "guest"), each told by its strategy.json to drop its stones where ours did
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import json, os, sys, tempfile
from pathlib import Path

# What these scripts share (reference_batch.py beside them), imported without a __pycache__ there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from reference_batch import load_hooks, serve  # noqa: E402

DIRS = {"reversi": "5358130e/14885f61ff210d2dd44c58a15ca4140bd89558f41f3eb867bc188e8f",
        "gomoku": "6fdb1053/bf4b3c2eb280d0f48215042ce2a330bef4d14113fdab3c4f997a0827",
        "connect4": "5cd50a30/977f690c81073e861c9fec9323b3bf359e703c886ff9b0153c1cb209"}
modules = {}


def hooks_of(game):
    if game not in modules:
        modules[game] = load_hooks("h", DIRS[game])
    return modules[game]


def result(r):
    """A HookResult as JSON (the reference's hooks may also return a bare message)."""
    if r is None or isinstance(r, dict):
        return {"response": r, "completed": False, "abort": False}
    return {"response": r.response, "completed": r.completed, "abort": r.abort}


def connect4(h, req):
    cols, rows = req["cols"], req["rows"]
    msgs = [f["msg"] for f in req["frames"]]
    stones = [("guest" if m["action"] == "move" else "host", m["col"]) for m in msgs
              if m["action"] == "move" or (m["action"] == "round_result" and m["player"] == "host")]
    sym = {"guest": h.RED, "host": h.YELLOW}
    b = [[h.EMPTY] * cols for _ in range(rows)]
    rules = []
    for side, col in stones:
        r = h.drop_cell(b, rows, cols, col)
        if r is not None:
            b[r][col] = sym[side]
        rules.append({"row": r, "win": r is not None and h.is_win(b, rows, cols, r, col, sym[side]),
                      "full": h.is_full(b, rows, cols)})

    def hooks(role, d):
        x = h.Hooks()
        x.proto_init({"cols": cols, "rows": rows}, role, [], Path(d), None)
        # "seq": the n-th stone of this side goes to sequence[n] (its _pick_auto), i.e. where ours went.
        x.strategy.write({"mode": "seq", "sequence": [c for s, c in stones if s == role]})
        return x

    with tempfile.TemporaryDirectory() as hd, tempfile.TemporaryDirectory() as gd:
        host, guest = hooks("host", hd), hooks("guest", gd)
        theirs_host = [result(host.proto_host_handle_join(msgs[0]))]
        theirs_host += [result(host.proto_host_handle(m)) for m in msgs if m["action"] == "move"]
        theirs_guest = {"join": guest.proto_guest_join_message()}
        guest.proto_guest_handle_ready(msgs[1])
        theirs_guest["first"] = guest.proto_guest_first_action()
        theirs_guest["answers"] = [result(guest.proto_guest_handle(m)) for m in msgs[2:] if m["action"] != "move"]
    return json.dumps({"rules": rules, "host": theirs_host, "guest": theirs_guest})


def run(req):
    h = hooks_of(req["game"])
    if req["game"] == "connect4":
        return connect4(h, req)
    n = req["n"]
    sym = {"guest": "B", "host": "W"}
    out = []
    if req["game"] == "reversi":
        b = h.initial_board(n)
        if req.get("selfplay"):
            side = "guest"
            while not (h.is_full(b, n) or (not h.has_legal(b, n, "B") and not h.has_legal(b, n, "W"))):
                m = h.heuristic_move(b, n, sym[side])
                if m:
                    h.apply_move(b, n, m[0], m[1], sym[side])
                    out.append([side, m[0], m[1]])
                else:
                    out.append([side, "pass"])
                side = "host" if side == "guest" else "guest"
        else:
            for mv in req["moves"]:
                s = sym[mv[0]]
                if mv[1] == "pass":
                    legal, flipped = not h.has_legal(b, n, s), 0
                else:
                    legal = h.is_legal(b, n, mv[1], mv[2], s)
                    flipped = h.apply_move(b, n, mv[1], mv[2], s) if legal else 0
                bl, wh = h.count_stones(b, n, "B"), h.count_stones(b, n, "W")
                over = h.is_full(b, n) or (not h.has_legal(b, n, "B") and not h.has_legal(b, n, "W"))
                out.append({"legal": legal, "flipped": flipped, "black": bl, "white": wh, "over": over,
                            "winner": ("guest" if bl > wh else "host" if wh > bl else "none") if over else "none"})
    else:
        b = [[h.EMPTY] * n for _ in range(n)]
        if req.get("selfplay"):
            side = "guest"
            while True:
                r, c = h.heuristic_move(b, n, sym[side])
                b[r][c] = sym[side]
                out.append([side, r, c])
                if h.is_win(b, n, r, c, sym[side]) or h.is_full(b, n):
                    break
                side = "host" if side == "guest" else "guest"
        else:
            for side, r, c in req["moves"]:
                legal = h._in(n, r, c) and b[r][c] == h.EMPTY
                if legal:
                    b[r][c] = sym[side]
                out.append({"legal": legal, "win": legal and h.is_win(b, n, r, c, sym[side]), "full": h.is_full(b, n)})
    return json.dumps(out)


serve(run)
