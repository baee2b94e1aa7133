#!/usr/bin/env python3
"""Writes test-vectors/protocol-id.json: spec texts and their protocol_id.

Expected ids come from Python itself: json.loads of the spec text, the contract subset and flow
transform as ../shared/reference/NOTES.md A2 states them (re-implemented here, in Python), then
json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":")) and hashlib.sha256 — the same
serialiser the reference implementation uses, so floats, big integers and key order are Python's own.

Run: python3 scripts/vectors/gen_protocol_id.py
"""
import hashlib
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test-vectors", "protocol-id.json")
MODE_KEY = {"simultaneous_round": "round", "authoritative_realtime": "realtime", "authoritative_group": "group"}


def contract(spec):
    out = {}
    for k in ("messages", "rules", "choices", "commit_reveal"):
        if k in spec:
            out[k] = spec[k]
    flow = spec.get("flow")
    if isinstance(flow, dict):
        f = {}
        if flow.get("phases"):
            f["phases"] = flow["phases"]
        mode = flow.get("mode")
        if isinstance(mode, str) and mode and mode != "session_loop":
            f["mode"] = mode
            key = MODE_KEY.get(mode)
            if key and isinstance(flow.get(key), dict):
                f[key] = flow[key]
        if f:
            out["flow"] = f
    params = spec.get("parameters")
    if isinstance(params, dict):
        out["parameters"] = {k: ({pk: pv for pk, pv in v.items() if pk != "default"} if isinstance(v, dict) else v) for k, v in params.items()}
    if "timing" in spec:
        out["timing"] = spec["timing"]
    return out


def pid(text):
    return hashlib.sha256(json.dumps(contract(json.loads(text)), sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


MSG = '[{"name":"move","direction":"guest_to_host","fields":{"action":{"type":"enum","values":["move"],"required":true}}}]'
cases = []


def add(name, why, text):
    c = json.dumps(contract(json.loads(text)), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert hashlib.sha256(c.encode("utf-8")).hexdigest() == pid(text)
    cases.append({"name": name, "why": why, "spec": text, "contract": c, "protocol_id": pid(text)})


add("minimal", "name and messages only", '{"name":"Minimal","messages":' + MSG + '}')
add("presentation-ignored", "name, description, type, decision, shadow_judge, spec_version, tags do not change the id: same id as minimal",
    '{"name":"Other name","description":"d","type":"game","family":"x","tags":["a"],"capabilities":["b"],"spec_version":"1.0","decision":{"mode":"manual"},"shadow_judge":true,"messages":' + MSG + '}')
assert cases[0]["protocol_id"] == cases[1]["protocol_id"]
add("astral-keys", "keys sort by code point: U+E000 before U+1F600 (UTF-16 order would put the emoji first)",
    '{"name":"n","messages":' + MSG + ',"rules":{"\\ue000":"private use","😀":"emoji","z":"z","\\u00e9":"e acute","\\ud834\\udd1e":"clef"}}')
add("floats", "non-integer numbers print as Python's float repr",
    '{"name":"n","messages":' + MSG + ',"rules":{"a":1.0,"b":1e16,"c":1E15,"d":0.0001,"e":0.00001,"f":-0.0,"g":1.5e300,"h":123456789.125,"i":0.1,"j":2.5e-7,"k":100.0e0}}')
add("big-integers", "integers exact at any size; -0 is the integer 0",
    '{"name":"n","messages":' + MSG + ',"rules":{"big":123456789012345678901234567890,"neg":-98765432109876543210,"zero":-0,"safe":9007199254740993}}')
add("strings", "escapes as Python writes them with ensure_ascii=False: controls as \\u00XX, U+2028 and non-ASCII raw",
    '{"name":"n","messages":' + MSG + ',"rules":{"s":"quote \\" backslash \\\\ nl \\n tab \\t bell \\u0007 del \\u007f ls \\u2028 é 中"}}')
add("flow-session-loop-dropped", "mode session_loop is not written (old hashes stay stable): same id as minimal",
    '{"name":"n","messages":' + MSG + ',"flow":{"mode":"session_loop","round":{"value_field":"x"},"phases":[]}}')
assert cases[-1]["protocol_id"] == cases[0]["protocol_id"]
add("flow-simultaneous-round", "round kept under simultaneous_round, other flow keys dropped",
    '{"name":"n","messages":' + MSG + ',"flow":{"mode":"simultaneous_round","round":{"value_field":"choice","value_type_ref":"reveal.fields.choice"},"realtime":{"tick_rate_hz":10},"end_when":"x","phases":[{"phase":"p","exchange":[]}]}}')
add("flow-round-under-free-dropped", "round only counts under simultaneous_round",
    '{"name":"n","messages":' + MSG + ',"flow":{"mode":"free","round":{"value_field":"choice"}}}')
add("flow-realtime", "realtime kept under authoritative_realtime",
    '{"name":"n","messages":' + MSG + ',"flow":{"mode":"authoritative_realtime","realtime":{"tick_rate_hz":20,"input_delay_ticks":2,"snapshot_every_ticks":5,"max_command_lead_ticks":10,"max_commands_per_frame":8,"disconnect_policy":"abort"}}}')
add("flow-not-object", "a flow that is not an object contributes nothing: same id as minimal", '{"name":"n","messages":' + MSG + ',"flow":"session_loop"}')
assert cases[-1]["protocol_id"] == cases[0]["protocol_id"]
add("parameters-defaults-dropped", "parameter defaults are not part of the contract",
    '{"name":"n","messages":' + MSG + ',"parameters":{"best_of":{"type":"integer","min":1,"max":99,"default":3},"raw":5}}')
add("parameters-other-default", "only the default differs: same id as parameters-defaults-dropped",
    '{"name":"n","messages":' + MSG + ',"parameters":{"best_of":{"type":"integer","min":1,"max":99,"default":7},"raw":5}}')
assert cases[-1]["protocol_id"] == cases[-2]["protocol_id"]
add("timing-choices-commit-reveal", "timing, choices and commit_reveal are part of the contract",
    '{"name":"n","messages":' + MSG + ',"choices":["rock","paper"],"commit_reveal":{"algorithm":"SHA256"},"timing":{"mode":"simultaneous","min_think_seconds":1,"max_think_seconds":3}}')
add("null-rules", "a key present with null is part of the contract", '{"name":"n","messages":' + MSG + ',"rules":null}')
add("whitespace-and-order", "formatting and key order of the text do not matter: same id as timing-choices-commit-reveal",
    '{\n  "timing": {"max_think_seconds": 3, "min_think_seconds": 1, "mode": "simultaneous"},\n  "commit_reveal": {"algorithm": "SHA256"},\n  "choices": ["rock", "paper"],\n  "messages": ' + MSG + ',\n  "name": "n"\n}')
assert cases[-1]["protocol_id"] == cases[-3]["protocol_id"]


# Python float repr at its edges: the switch to exponent form below 1e-4 and from 1e16, the extremes of
# the double range, and literals with more digits than a double holds (which the parser must round
# correctly before repr picks the shortest digits back).
EDGE_FLOATS = ["0.0001", "0.00009999999999999999", "9.999e-5", "1e-4", "1e-5", "0.00001", "1.5e-5",
               "9999999999999998.0", "1e16", "1E+16", "10000000000000001.0", "1.0000000000000002e16", "1e15",
               "999999999999999.9", "123456789012345.67", "1e22", "1e21", "1e23", "5e-324", "4.9406564584124654e-324",
               "2.2250738585072014e-308", "2.225073858507201e-308", "1.7976931348623157e308", "1.7976931348623158e308",
               "0.30000000000000004", "0.1e1", "2e0", "0e0", "0.0e-5", "-0e5", "-0.0", "-1.5E+3", "100.0e-2",
               "3.14159265358979323846264338327950288419716939937510", "9007199254740993.0", "9007199254740993e0",
               "0.000000000000000000000000000001", "1.00000000000000011102230246251565404236316680908203125",
               "1.000000000000000111022302462515654042363166809082031250001", "1e-400", "-1e-400", "123e-20",
               "1.0E-7", "7.0e-10", "12345678901234567890.0", "0.5", "-2.5e-7", "1e308", "8.98846567431158e307"]
add("floats-edges", "float repr at the exponent-form boundaries, extremes and over-long literals (parsed with correct rounding)",
    '{"messages":' + MSG + ',"rules":[' + ",".join(EDGE_FLOATS) + ']}')

import random
import struct

rng = random.Random(20261201)


def random_doubles(n):
    out = []
    while len(out) < n:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            out.append(x)
    return out


def scaled(n):
    # Doubles of every decimal magnitude around the repr switch, not only the extreme exponents that
    # random bit patterns mostly give.
    return [rng.uniform(1, 10) * 10.0 ** rng.randint(-12, 22) * rng.choice([1, -1]) for _ in range(n)]


for label, xs in (("random-bits", random_doubles(150)), ("random-magnitudes", scaled(150))):
    lits = []
    for k, x in enumerate(xs):
        # The same double written several ways: repr, 17 significant digits, 25 digits, fixed point.
        form = k % 4
        lit = repr(x) if form == 0 else "%.17g" % x if form == 1 else "%.25e" % x if form == 2 else ("%.40f" % x if abs(x) < 1e20 else repr(x))
        if "." not in lit and "e" not in lit and "E" not in lit:
            lit += ".0"
        lits.append(lit)
    add("floats-" + label, "random doubles (seeded) in several notations: Python's repr of each",
        '{"messages":' + MSG + ',"rules":[' + ",".join(lits) + ']}')

add("big-integers-beyond-64-bit", "integers past u64 and i64, 10^100, negative zero inside arrays: exact, -0 as 0",
    '{"messages":' + MSG + ',"rules":{"u64max":18446744073709551615,"u64max1":18446744073709551616,"i64min1":-9223372036854775809,'
    '"googol":1' + "0" * 100 + ',"neg":-' + "9" * 300 + ',"zeros":[-0,0,[-0]],"two53":9007199254740992,"two53p1":9007199254740993}}')
add("key-order-utf16-vs-code-point", "keys whose UTF-16 order differs from code-point order, at several depths, escaped and raw",
    '{"messages":' + MSG + ',"rules":{"\\uffff":1,"\\ud800\\udc00":2,"\U0001f600":3,"\\ue000":4,"\\uff5a":5,"a":{"\U00010000":1,"\\ufb01":2,"\\u00ff":3,"":4},'
    '"ab":6,"a\\u0000":7,"A":8,"\\u007f":9}}')
add("strings-all-escapes", "every short escape, \\/ read back as /, controls and U+007F, U+2028/9, BOM and astral characters as Python writes them",
    '{"messages":' + MSG + ',"rules":{"s":"\\b\\f\\n\\r\\t\\"\\\\\\/ \\u0000 \\u0001 \\u001f \\u0020 \\u007f \\u0080 \\u2028 \\u2029 \\ufeff \\ud83d\\ude00 😀 \\u00e9 é",'
    '"k\\n\\"":"\\u0041\\u00DF\\uD834\\uDD1E"}}')
add("flow-authoritative-group", "group kept under authoritative_group; round and realtime dropped",
    '{"messages":' + MSG + ',"flow":{"mode":"authoritative_group","group":{"min":2,"max":8},"round":{"x":1},"realtime":{"y":2},"phases":["a"]}}')
add("flow-group-not-object", "group that is not an object is dropped, mode kept",
    '{"messages":' + MSG + ',"flow":{"mode":"authoritative_group","group":[1,2]}}')
add("flow-phases-falsy", "falsy phases (empty list, 0, 0.0, empty string, null, false) are dropped; flow with nothing left is not written: same id as minimal",
    '{"messages":' + MSG + ',"flow":{"phases":[],"mode":"session_loop"},"x":[{"phases":0},{"phases":0.0}]}')
add("flow-phases-zero-float", "phases 0.0 and 1e-400 (0.0 as a double) are falsy",
    '{"messages":' + MSG + ',"flow":{"phases":1e-400,"mode":""}}')
add("flow-phases-truthy-values", "truthy phases of any type are kept as they are",
    '{"messages":' + MSG + ',"flow":{"phases":{"a":[]},"mode":7,"round":{}}}')
add("flow-phases-minus-zero", "phases -0 is the integer 0, falsy; a phases of -0.5 is truthy",
    '{"messages":' + MSG + ',"flow":{"phases":-0},"rules":{"flow":{"phases":-0.5}}}')
add("flow-mode-not-string", "a mode that is not a string is dropped, and so is its configuration",
    '{"messages":' + MSG + ',"flow":{"mode":["simultaneous_round"],"round":{"value_field":"x"},"phases":[1]}}')
add("flow-mode-unknown", "an unknown mode is kept without any configuration; keys that are names of JS Object.prototype members are plain keys",
    '{"messages":' + MSG + ',"flow":{"mode":"constructor","constructor":{"a":1},"__proto__":{"b":2},"toString":{}}}')
add("flow-nested-modes", "flow objects below the top level are copied as they are",
    '{"messages":' + MSG + ',"flow":{"mode":"simultaneous_round","round":{"flow":{"mode":"session_loop","round":{"default":1}}}},"rules":{"flow":{"mode":"session_loop"}}}')
add("parameters-shapes", "parameters: object values lose their default (only at that level), other values stay; an object with only a default becomes {}",
    '{"messages":' + MSG + ',"parameters":{"a":{"default":1},"b":[{"default":2}],"c":null,"d":{"type":{"default":3},"default":4,"min":-0},"e":"default","default":{"default":5,"x":1}}}')
add("parameters-not-object", "parameters that is not an object is not part of the contract: same id as minimal",
    '{"messages":' + MSG + ',"parameters":[{"default":1}]}')
add("empty-contract", "no contract keys at all: the contract is {}", '{"name":"n","description":"nothing else"}')
add("contract-keys-any-value", "the copied keys are kept whatever their type",
    '{"messages":"m","rules":[],"choices":0,"commit_reveal":false,"timing":-1.0}')
add("deep-nesting-127", "127 levels of nesting, the most accepted",
    '{"rules":' + "[" * 126 + "]" * 126 + '}')
add("whitespace-everywhere", "spaces, tabs, CR and LF between every token",
    ' \t\r\n{ \t\r\n"messages" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, \t\r\n{ \t\r\n"a" \t\r\n: \t\r\nnull \t\r\n} \t\r\n] \t\r\n} \t\r\n')

# Texts both backends refuse, with the code and message of the TypeScript parser (ts/crypto/jcs.ts,
# ts/crypto/pyjson.ts), written by hand. Python's json accepts some of them (duplicate keys, 1e400,
# lone surrogates), so these are the project's own rules, not Python's; offsets count UTF-16 units.
errors = [
    ("empty", "", "JSON_SYNTAX", "unexpected end of input at offset 0"),
    ("not-object", "[1]", "JSON_SYNTAX", "spec.json must be a JSON object"),
    ("not-object-string", '"x"', "JSON_SYNTAX", "spec.json must be a JSON object"),
    ("trailing-comma-object", '{"a":1,}', "JSON_SYNTAX", "expected a string key at offset 7"),
    ("missing-colon", '{"a" 1}', "JSON_SYNTAX", "expected ':' at offset 5"),
    ("missing-comma-object", '{"a":1 "b":2}', "JSON_SYNTAX", "expected ',' or '}' at offset 7"),
    ("missing-comma-array", '{"a":[1 2]}', "JSON_SYNTAX", "expected ',' or ']' at offset 8"),
    ("trailing-comma-array", '{"a":[1,]}', "JSON_SYNTAX", 'unexpected character "]" at offset 8'),
    ("unclosed-object", '{"a":1', "JSON_SYNTAX", "expected ',' or '}' at offset 6"),
    ("unclosed-array", '{"a":[', "JSON_SYNTAX", "unexpected end of input at offset 6"),
    ("bad-literal", '{"a":tru}', "JSON_SYNTAX", "invalid literal at offset 5"),
    ("leading-zero", '{"a":01}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("negative-leading-zero", '{"a":-01}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("dot-no-digit", '{"a":1.}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("exponent-no-digit", '{"a":1e}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("exponent-sign-no-digit", '{"a":1.5E+}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("minus-alone", '{"a":-}', "JSON_SYNTAX", "invalid number at offset 5"),
    ("plus", '{"a":+1}', "JSON_SYNTAX", 'unexpected character "+" at offset 5'),
    ("second-dot", '{"a":1.5.2}', "JSON_SYNTAX", "expected ',' or '}' at offset 8"),
    ("exponent-then-dot", '{"a":1e5.2}', "JSON_SYNTAX", "expected ',' or '}' at offset 8"),
    ("second-exponent", '{"a":[1e5e2]}', "JSON_SYNTAX", "expected ',' or ']' at offset 9"),
    ("float-overflow", '{"a":1e400}', "JSON_NUMBER_RANGE", "1e400 is not a finite double"),
    ("float-overflow-long", '{"a":-' + "1" * 50 + '.0e400}', "JSON_NUMBER_RANGE", "-" + "1" * 39 + " is not a finite double"),
    ("float-overflow-before-syntax", '{"a":[1e999 x', "JSON_NUMBER_RANGE", "1e999 is not a finite double"),
    ("syntax-before-float-overflow", '{"a":[1 1e999]}', "JSON_SYNTAX", "expected ',' or ']' at offset 8"),
    ("raw-control", '{"a":"\u0001"}', "JSON_SYNTAX", "unescaped control character in string at offset 6"),
    ("raw-newline", '{"a":"x\ny"}', "JSON_SYNTAX", "unescaped control character in string at offset 7"),
    ("bad-escape", '{"a":"\\q"}', "JSON_SYNTAX", "invalid escape at offset 6"),
    ("backslash-at-end", '{"a":"\\', "JSON_SYNTAX", "invalid escape at offset 6"),
    ("short-u-escape", '{"a":"\\u12"}', "JSON_SYNTAX", "invalid \\u escape at offset 6"),
    ("non-hex-u-escape", '{"a":"\\u12G4"}', "JSON_SYNTAX", "invalid \\u escape at offset 6"),
    ("lone-low", '{"a":"\\udc00"}', "JSON_LONE_SURROGATE", "unpaired low surrogate in string"),
    ("lone-high", '{"a":"\\ud800"}', "JSON_LONE_SURROGATE", "unpaired high surrogate in string"),
    ("high-then-other-escape", '{"a":"\\ud800\\n"}', "JSON_LONE_SURROGATE", "unpaired high surrogate in string"),
    ("high-then-bmp-escape", '{"a":"\\ud800\\u0041"}', "JSON_LONE_SURROGATE", "unpaired high surrogate in string"),
    ("high-then-high", '{"a":"\\ud800\\ud800"}', "JSON_LONE_SURROGATE", "unpaired high surrogate in string"),
    ("high-then-bad-hex", '{"a":"\\ud800\\uzzzz"}', "JSON_SYNTAX", "invalid \\u escape at offset 12"),
    ("high-at-end", '{"a":"\\ud800', "JSON_SYNTAX", "unterminated string at offset 12"),
    ("high-then-backslash-at-end", '{"a":"\\ud800\\', "JSON_SYNTAX", "unterminated string at offset 13"),
    ("unterminated", '{"a":"abc', "JSON_SYNTAX", "unterminated string at offset 9"),
    ("unterminated-key", '{"ab', "JSON_SYNTAX", "unterminated string at offset 4"),
    ("duplicate", '{"a":1,"a":2}', "JSON_DUPLICATE_KEY", 'duplicate object key "a" (I-JSON forbids repeated keys)'),
    ("duplicate-escaped", '{"b":1,"\\u0062":2}', "JSON_DUPLICATE_KEY", 'duplicate object key "b" (I-JSON forbids repeated keys)'),
    ("duplicate-nested-ignored-key", '{"name":{"x":[{"k":1,"k":1}]}}', "JSON_DUPLICATE_KEY", 'duplicate object key "k" (I-JSON forbids repeated keys)'),
    ("duplicate-smallest-in-utf16", '{"\\ue000":1,"😀":2,"z":3,"\\ue000":4,"\\ud83d\\ude00":5}', "JSON_DUPLICATE_KEY",
     'duplicate object key "😀" (I-JSON forbids repeated keys)'),
    ("duplicate-control-key", '{"\\u0001\\n":1,"\\u0001\\n":2}', "JSON_DUPLICATE_KEY", 'duplicate object key "\\u0001\\n" (I-JSON forbids repeated keys)'),
    ("duplicate-before-later-syntax", '{"x":{"a":1,"a":2} ]', "JSON_DUPLICATE_KEY", 'duplicate object key "a" (I-JSON forbids repeated keys)'),
    ("syntax-before-duplicate-closes", '{"x":{"a":1,"a":2 ]}', "JSON_SYNTAX", "expected ',' or '}' at offset 18"),
    ("offset-counts-utf16-units", '{"😀é":1 x}', "JSON_SYNTAX", "expected ',' or '}' at offset 9"),
    ("unexpected-astral", '{"a":😀}', "JSON_SYNTAX", 'unexpected character "\\ud83d" at offset 5'),
    ("unexpected-bmp", '{"a":é}', "JSON_SYNTAX", 'unexpected character "é" at offset 5'),
    ("unexpected-control", '{"a":\u0001}', "JSON_SYNTAX", 'unexpected character "\\u0001" at offset 5'),
    ("unexpected-backslash", '{"a":\\}', "JSON_SYNTAX", 'unexpected character "\\\\" at offset 5'),
    ("unexpected-bom", '\ufeff{}', "JSON_SYNTAX", 'unexpected character "\ufeff" at offset 0'),
    ("unexpected-close", '{"a":}', "JSON_SYNTAX", 'unexpected character "}" at offset 5'),
    ("non-string-key", '{1:2}', "JSON_SYNTAX", "expected a string key at offset 1"),
    ("single-quotes", "{'a':1}", "JSON_SYNTAX", "expected a string key at offset 1"),
    ("too-deep", '{"a":' + "[" * 127 + "]" * 127 + "}", "JSON_TOO_DEEP", "nesting deeper than 127"),
    ("too-deep-unclosed", "[" * 100000, "JSON_TOO_DEEP", "nesting deeper than 127"),
    ("trailing", "{} x", "JSON_SYNTAX", "trailing characters at offset 3"),
    ("trailing-object", '{"a":1}{', "JSON_SYNTAX", "trailing characters at offset 7"),
    ("nan", '{"a":NaN}', "JSON_SYNTAX", 'unexpected character "N" at offset 5'),
    ("null-prefix", '{"a":nul}', "JSON_SYNTAX", "invalid literal at offset 5"),
    ("duplicate-smallest-ascii", '{"😀":1,"z":2,"😀":3,"z":4}', "JSON_DUPLICATE_KEY", 'duplicate object key "z" (I-JSON forbids repeated keys)'),
    ("infinity", '{"a":-Infinity}', "JSON_SYNTAX", "invalid number at offset 5"),
]

doc = {"description": "protocol_id = lowerhex(SHA-256(utf8(contract))) for spec texts; see ts/spec/protocol-id.ts and ../shared/reference/NOTES.md A2.",
       "source": "scripts/vectors/gen_protocol_id.py: Python json.loads / json.dumps(sort_keys=True, ensure_ascii=False, separators=(',', ':')) and hashlib, the serialiser of the reference implementation",
       "cases": cases,
       "errors_source": "written by hand: the TypeScript parser's refusals (code and message), which both backends give",
       "errors": [{"name": n, "spec": t, "code": code, "message": m} for n, t, code, m in errors]}
with open(OUT, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("wrote", len(cases), "cases and", len(errors), "errors")
