#!/usr/bin/env python3
"""Writes test-vectors/messages.json: message texts and the reference implementation's verdict on each.

For every declared message of every spec (the project's built-ins, read from ts/protocols/*/spec.json,
and a few synthetic specs for the number and size classes), it writes a valid message and mutations
of it: missing and undeclared fields, wrong types, limits and one past them, integers written as
floats (`1.0`, `1e2`, `-0.0`, `1e-400`), integers beyond 2^53, sizes that depend on how Python prints
a number, empty ciphertext, and the strict-JSON cases the project refuses by policy. Messages are
written as wire text, so number literals reach both validators as written.

Each verdict is the reference's own: json.loads of the text, then validate_message_obj from
src/aigenora/proto/validate.py of the reference implementation (not re-implemented here).

Run:  PYTHONPATH=../shared/reference/aigenora-src/src python3 scripts/vectors/gen_messages.py
      ... --stdout --reference-specs DIR   (the test's live run: also every spec under DIR, printed)
"""
import argparse
import glob
import hashlib
import json
import os
import random
import subprocess
import sys

from aigenora.proto.validate import ValidationError, validate_message_obj

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "test-vectors", "messages.json")

POLICY = {
    "policy-duplicate-key": "strict JSON: a repeated key is refused (I-JSON); Python keeps the last one",
    "policy-lone-surrogate": "strict JSON: an unpaired surrogate escape is refused; Python accepts it into a str (and then fails or crashes only where it encodes UTF-8)",
    "policy-depth": "strict JSON: nesting deeper than 127 is refused; Python's limit is its recursion limit (about 1000)",
    "policy-nonfinite": "strict JSON: NaN, Infinity and numbers that overflow a double (1e400) are refused at parse time; Python reads them as floats, which its validator then refuses too",
}


class Raw:
    """A JSON literal written as given (a number as the wire spells it, or any JSON text)."""

    def __init__(self, text):
        self.text = text


def enc(v):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + enc(x) for k, x in v.items) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + enc(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(enc(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


class Pairs:
    """An object as a list of members, so that a key may repeat."""

    def __init__(self, items):
        self.items = items


def spec_entry(name, origin, text):
    return {"name": name, "origin": origin, "text": text, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


# ---------------------------------------------------------------- synthetic specs
def field(t, **kw):
    return {"type": t, **kw}


def msg(name, direction, fields):
    return {"name": name, "direction": direction, "fields": {"action": {"type": "enum", "values": [name], "required": True}, **fields}}


TWO53 = 2**53
SYNTHETIC = {
    "numbers": {
        "name": "Numbers",
        "messages": [
            msg("ints", "both", {
                "plain": field("integer"),
                "small": field("integer", min=0, max=100),
                "b53": field("integer", max=TWO53),
                "b53p1": field("integer", min=-(TWO53 + 1), max=TWO53 + 1),
                "b64": field("integer", min=-(2**63), max=2**64 - 1),
                "huge": field("integer", max=10**30),
            }),
            msg("arrays", "both", {
                **{f"a{n}": field("array", items=field("integer"), max_total_bytes=n) for n in (1, 2, 3, 5, 8, 16, 21, 22, 23, 40)},
                "texts": field("array", items=field("text", max_length=4), min_items=1, max_items=3, max_total_bytes=8),
                "blobs": field("array", items=field("ciphertext", max_length=8), max_items=4),
            }),
            msg("docs", "both", {
                **{f"j{n}": field("json", max_total_bytes=n) for n in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 22, 23, 24, 32, 64)},
                "obj": field("json", container="object", max_total_bytes=64),
                "arr": field("json", container="array", max_total_bytes=64),
                "deep": field("json"),
            }),
            msg("blobs", "guest_to_host", {
                "c": field("ciphertext"),
                "c4": field("ciphertext", max_length=4),
                "t": field("ticket"),
                "x": field("text", max_length=6),
                "o": field("ot_blob", max_length=6),
            }),
        ],
    },
    "limits-as-written": {
        "name": "Limits as written",
        # Bounds beyond doubles and bounds written as floats, exactly as the spec text spells them.
        "raw": '{"name":"Limits as written","messages":[{"name":"m","direction":"both","fields":{'
               '"action":{"type":"enum","values":["m"],"required":true},'
               '"odd":{"type":"integer","min":-9007199254740993,"max":9007199254740993},'
               '"f":{"type":"integer","min":1.0,"max":1e2},'
               '"e":{"type":"integer","max":1e300}}}]}',
    },
}

INT_LITERALS = ["0", "1", "-1", "-0", "1.0", "1e0", "1E2", "1e+2", "-0.0", "0.0", "1e-400", "3.0000000000000001", "1.5",
                "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993", "18446744073709551615",
                "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1000000000000000000000",
                "1e21", "1e300", "123456789012345678901234567890", "1000000000000000000000000000000",
                "1000000000000000000000000000001", "99", "100", "101"]
JSON_DOCS = ["1.0", "1", "-0", "-0.0", "0.0", "1e300", "1E300", "1e-400", "1e-7", "1e16", "1e15", "0.0001", "0.00001",
             "123456789012345678901", "9007199254740993", "1e21", "1000000000000000000000", "[1.0,2.0]", "[1,2]", "{}", "[]",
             '{"a":1.0}', '{"b":1,"a":2}', '{"a":[1e2,-0]}', '"\\u0000"', '"\\u001f\\n"', '"é"', '"\\u00e9"', '"\\ud83d\\ude00"',
             '"\\u2028\\u007f"', "null", "true", "false", '"x"', "2.5e-5", "100.0e0", "-1.5E+3", "[[],{}]", '{"é":"\\/"}',
             '{"k":' + "1" * 30 + "}", "[" + ",".join(["1e1"] * 4) + "]"]


def synthetic_specs():
    out = []
    for key, s in SYNTHETIC.items():
        text = s.get("raw") or json.dumps({"name": s["name"], "messages": s["messages"]}, ensure_ascii=False)
        out.append(spec_entry(f"synthetic-{key}", "synthetic (this script)", text))
    return out


# ---------------------------------------------------------------- message generation
HEX = "0123456789abcdef"


def hexs(rnd, n):
    return "".join(rnd.choice(HEX) for _ in range(n))


def valid_value(f, rnd):
    t = f.get("type")
    if t == "integer":
        lo, hi = f.get("min"), f.get("max")
        if lo is not None and hi is not None:
            return int((lo + hi) // 2) if lo <= hi else int(lo)
        return int(lo) if lo is not None else (int(hi) if hi is not None and hi < 0 else 0)
    if t == "enum":
        return (f.get("values") or ["?"])[0]
    if t == "boolean":
        return True
    if t in ("hash", "key"):
        return hexs(rnd, 64)
    if t == "nonce":
        return hexs(rnd, 32)
    if t == "signature":
        return hexs(rnd, 128)
    if t == "id":
        return "agent_1:x.y-z"
    if t == "ticket":
        return "ticket-1"
    if t == "text":
        return "hi é"[: max(0, min(4, f.get("max_length", 2000) - 2))]
    if t == "ciphertext":
        return "ab" * max(1, min(4, f.get("max_length", 512) // 2))
    if t == "ot_blob":
        return "00ff"[: f.get("max_length", 16384)]
    if t == "array":
        n = max(f.get("min_items", 1), 0)
        if "max_items" in f:
            n = min(n, f["max_items"])
        return [valid_value(f.get("items", {"type": "text"}), rnd) for _ in range(n)]
    if t == "json":
        c = f.get("container", "any")
        small = f.get("max_total_bytes", 1048576) < 7
        if c == "array":
            return [] if small else [1]
        return ({} if c == "object" else 1) if small else {"a": 1}
    return None


def mutations(name, f, rnd):
    """(class, value) pairs for one field."""
    t = f.get("type")
    out = [("type", Raw("null")), ("type", Raw('"1"')), ("type", Raw("true")), ("type", Raw("[]")), ("type", Raw("{}"))]
    if t == "integer":
        out += [("integer-literal", Raw(x)) for x in INT_LITERALS]
        for k in ("min", "max"):
            if k in f:
                v = f[k]
                out += [("integer-range", Raw(str(int(v) + d))) for d in (-1, 0, 1)] + [("integer-literal", Raw(f"{int(v)}.0"))]
    elif t == "enum":
        out += [("enum", "NOPE"), ("enum", (f.get("values") or ["x"])[0].upper()), ("enum", "")]
    elif t == "boolean":
        out += [("type", Raw("1")), ("type", Raw("0")), ("type", "true")]
    elif t in ("hash", "key", "nonce", "signature"):
        n = {"hash": 64, "key": 64, "nonce": 32, "signature": 128}[t]
        out += [("string-format", "A" * n), ("string-format", hexs(rnd, n - 1)), ("string-format", hexs(rnd, n + 1)), ("string-format", ""),
                ("string-format", hexs(rnd, n) + "\n"), ("type", Raw("1"))]
        if t == "nonce":
            out += [("string-format", hexs(rnd, 16)), ("string-format", hexs(rnd, 15)), ("string-format", hexs(rnd, 64)), ("string-format", hexs(rnd, 65))]
    elif t == "id":
        out += [("string-format", ""), ("string-format", "a b"), ("string-format", "x" * 128), ("string-format", "x" * 129), ("string-format", "é")]
    elif t == "ticket":
        out += [("string-size", ""), ("string-size", "é" * 2048), ("string-size", "é" * 2049), ("string-size", "😀" * 2048), ("string-size", "😀" * 2049)]
    elif t in ("text", "ot_blob"):
        m = f.get("max_length", 2000 if t == "text" else 16384)
        out += [("string-size", "x" * m), ("string-size", "x" * (m + 1)), ("string-size", "é" * (m // 2)), ("string-size", "é" * (m // 2) + "x" * (m % 2 + 1)),
                ("string-size", "😀" * (m // 4)), ("string-size", "😀" * (m // 4 + 1)), ("type", Raw("1"))]
    elif t == "ciphertext":
        m = f.get("max_length", 512)
        out += [("ciphertext", ""), ("ciphertext", "a"), ("ciphertext", "ab"), ("ciphertext", "AB"), ("ciphertext", "ab" * (m // 2)),
                ("ciphertext", "ab" * (m // 2 + 1)), ("ciphertext", "a" * (m - 1 if m % 2 == 0 else m)), ("ciphertext", "zz")]
    elif t == "array":
        items = f.get("items", {"type": "text"})
        good = valid_value(items, rnd)
        lo, hi = f.get("min_items"), f.get("max_items")
        if lo is not None and lo > 0:
            out.append(("array", [good] * (lo - 1)))
        if hi is not None:
            out += [("array", [good] * hi), ("array", [good] * (hi + 1))]
        out += [("array", []), ("array", [good, Raw("null")]), ("array", [good, Raw("[1]")])]
        if items.get("type") == "integer":
            out += [("array-number", [Raw(x)]) for x in INT_LITERALS] + [("array-number", [Raw("1"), Raw("1.0")]), ("array-number", [Raw("9" * 21)] * 2)]
        if items.get("type") == "ciphertext":
            out += [("ciphertext", [""]), ("ciphertext", [good, ""])]
        if "max_total_bytes" in f and items.get("type") in ("text", "ot_blob", "ciphertext", "id"):
            per = max(len(json.dumps(good, ensure_ascii=False).encode()) - 2, 1)
            k = f["max_total_bytes"] // per
            if hi is None or k + 1 <= hi:
                out += [("array-size", [good] * k), ("array-size", [good] * (k + 1))]
    elif t == "json":
        out = [("json-number", Raw(x)) for x in JSON_DOCS]
        c = f.get("container", "any")
        out += [("json-container", Raw(x)) for x in ("1", "1.5", '"s"', "[1]", '{"a":1}', "null")]
        out += [("json-size", {"s": "x" * k}) for k in (0, 1, 10, 50, 60)]
        if c == "any":
            out.append(("policy-depth", Raw("[" * 200 + "]" * 200)))
            out.append(("json-number", Raw("[" * 100 + "1.0" + "]" * 100)))
    return out


def field_order(fields):
    return list(fields.items())


def build(fields, rnd, omit=(), replace=None, optional=True):
    obj = {}
    for k, f in fields.items():
        if k in omit:
            continue
        if replace and k in replace:
            obj[k] = replace[k]
        elif f.get("required") is True or optional:
            obj[k] = valid_value(f, rnd)
    if replace:
        for k, v in replace.items():
            if k not in obj and k not in omit:
                obj[k] = v
    return obj


def cases_for(spec_index, spec, rnd):
    out = []

    def add(cls, text, direction, name=None):
        out.append({"spec": spec_index, "class": cls, "direction": direction, "message": name, "text": text})

    for m in spec.get("messages", []):
        fields = m.get("fields") or {}
        d = m.get("direction")
        dirs = ["host_to_guest", "guest_to_host"] if d == "both" else [d]
        d0 = dirs[0]
        other = "guest_to_host" if d0 == "host_to_guest" else "host_to_guest"
        full = build(fields, rnd)
        add("valid", enc(full), d0)
        add("valid", enc(build(fields, rnd, optional=False)), d0)
        add("valid", enc(full), None)
        add("valid", enc(full), d0, m.get("name"))
        if d != "both":
            add("direction", enc(full), other)
        add("undeclared", enc({**full, "zz_extra": 1}), d0)
        add("action", enc({**full, "action": "zz_unknown"}), d0)
        add("action", enc({k: v for k, v in full.items() if k != "action"}), d0)
        add("action", enc({**full, "action": Raw("1")}), d0)
        add("not-object", enc([full]), d0)
        for k, f in fields.items():
            if f.get("required") is True:
                add("missing-required", enc({x: v for x, v in full.items() if x != k}), d0)
            if k == "action":
                continue
            for cls, v in mutations(k, f, rnd):
                add(cls, enc({**full, k: v}), d0)
        # Strict-JSON policy cases, on a valid message.
        body = enc(full)
        first = next(iter(full))
        add("policy-duplicate-key", enc(Pairs([(first, full[first])] + list(full.items()))), d0)
        add("policy-lone-surrogate", body[:-1] + ',"zz":"\\ud800"}', d0)
        text_fields = [k for k, f in fields.items() if f.get("type") in ("ticket", "text", "ot_blob", "json")]
        for k in text_fields[:2]:
            add("policy-lone-surrogate", enc({**full, k: Raw('"a\\udc00"')}), d0)
        add("policy-nonfinite", enc({**full, "zz": Raw("1e400")}), d0)
        add("policy-nonfinite", enc({**full, "zz": Raw("NaN")}), d0)
        int_fields = [k for k, f in fields.items() if f.get("type") == "integer"]
        for k in int_fields[:1]:
            add("policy-nonfinite", enc({**full, k: Raw("1e400")}), d0)
            add("policy-nonfinite", enc({**full, k: Raw("-Infinity")}), d0)
            add("integer-digits", enc({**full, k: Raw("9" * 4300)}), d0)
            add("integer-digits", enc({**full, k: Raw("9" * 4301)}), d0)
        add("syntax", body[:-1], d0)
        add("syntax", body + "x", d0)
    return out


def reference_verdict(spec, text, direction, name):
    try:
        message = json.loads(text)
    except Exception as e:  # noqa: BLE001 - any refusal of the text is a verdict
        return False, f"json.loads: {type(e).__name__}: {e}"[:200]
    try:
        validate_message_obj(spec, message, direction, name)
        return True, ""
    except ValidationError as e:
        return False, str(e)[:200]
    except Exception as e:  # noqa: BLE001 - the reference crashed: not a valid message either
        return False, f"crash: {type(e).__name__}: {e}"[:200]


def reference_commit():
    src = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    try:
        return subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return "25ede27f (the snapshot named in ../shared/reference/NOTES.md)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout", action="store_true")
    ap.add_argument("--reference-specs", help="also every */*/spec.json under this directory")
    a = ap.parse_args()
    specs = [spec_entry(f"builtin-{os.path.basename(os.path.dirname(p))}", "ts/protocols (this project's built-in)", open(p, encoding="utf-8").read())
             for p in sorted(glob.glob(os.path.join(ROOT, "ts", "protocols", "*", "spec.json")))]
    specs += synthetic_specs()
    if a.reference_specs:
        specs += [spec_entry(f"reference-{p.split(os.sep)[-3]}", "the reference implementation's built-in", open(p, encoding="utf-8").read())
                  for p in sorted(glob.glob(os.path.join(a.reference_specs, "*", "*", "spec.json")))]
    rnd = random.Random(19)
    cases = []
    for i, s in enumerate(specs):
        cases += cases_for(i, json.loads(s["text"]), rnd)
    for c in cases:
        ok, why = reference_verdict(json.loads(specs[c["spec"]]["text"]), c["text"], c["direction"], c["message"])
        c["reference"] = {"valid": ok, **({"error": why} if why else {})}
    for s in specs:
        if s["origin"].startswith("ts/protocols"):
            s.pop("text")  # read from ts/protocols by the test, checked against sha256
    doc = {
        "description": "Message texts (wire text, numbers as written) and the reference implementation's verdict on each; "
                       "cases whose class starts with policy- are the project's documented strict-JSON refusals (see `policy`).",
        "source": f"scripts/vectors/gen_messages.py: json.loads + validate_message_obj of the reference implementation "
                  f"(aigenora {reference_commit()}, src/aigenora/proto/validate.py), Python {sys.version.split()[0]}",
        "policy": POLICY,
        "specs": specs,
        "cases": cases,
    }
    text = json.dumps(doc, ensure_ascii=False, indent=0) + "\n"
    if a.stdout:
        sys.stdout.write(text)
    else:
        with open(OUT, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {OUT}: {len(cases)} cases over {len(specs)} specs, {sum(c['reference']['valid'] for c in cases)} valid per the reference")


if __name__ == "__main__":
    main()
