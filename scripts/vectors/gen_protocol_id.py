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
    cases.append({"name": name, "why": why, "spec": text, "protocol_id": pid(text)})


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

doc = {"description": "protocol_id = lowerhex(SHA-256(utf8(contract))) for spec texts; see ts/spec/protocol-id.ts and ../shared/reference/NOTES.md A2.",
       "source": "scripts/vectors/gen_protocol_id.py: Python json.loads / json.dumps(sort_keys=True, ensure_ascii=False, separators=(',', ':')) and hashlib, the serialiser of the reference implementation",
       "cases": cases}
with open(OUT, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("wrote", len(cases), "cases")
