# Replays board games through the reference implementation's own rule functions (its hooks.py) and
# prints what they decide, for test/protocols/board-rules.test.ts to compare with ours.
# stdin: {"game": "reversi"|"gomoku", "n": N, "moves": [[side, row, col] | [side, "pass"]], "selfplay": bool}
#      | {"batch": [request, ...]}: one line per request, {"ok": <its output>} or {"crash": <traceback>}.
import importlib.util, json, os, sys

# The batch protocol and deep copy shared by these scripts (reference_batch.py beside them; no __pycache__ there).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode
from reference_batch import serve  # noqa: E402
sys.dont_write_bytecode = _writes

DIRS = {"reversi": "5358130e/14885f61ff210d2dd44c58a15ca4140bd89558f41f3eb867bc188e8f",
        "gomoku": "6fdb1053/bf4b3c2eb280d0f48215042ce2a330bef4d14113fdab3c4f997a0827"}
root = sys.argv[1]
sys.path.insert(0, root)
modules = {}


def hooks_of(game):
    if game not in modules:
        spec = importlib.util.spec_from_file_location("h", f"{root}/aigenora/protocols/{DIRS[game]}/hooks.py")
        modules[game] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[game])
    return modules[game]


def run(req):
    h = hooks_of(req["game"])
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
