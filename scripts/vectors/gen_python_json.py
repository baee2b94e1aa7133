#!/usr/bin/env python3
"""Writes test-vectors/python-json.json: what Python's json.dumps writes, for the policies of the one
Python-style JSON writer (ts/crypto/python-json.ts: protocol_id, mental-poker transcripts, realtime and
group hashes) to be checked against.

- `texts`: JSON texts, each with `python` = json.dumps(json.loads(text), sort_keys=True,
  ensure_ascii=False, separators=(",", ":"), allow_nan=False), or `error` = the ValueError's message
  where Python refuses the value; `floats` lists json.dumps of every float json.loads read (the
  policies that refuse floats refuse exactly the texts that have one).
- `doubles`: JS numbers (as text both Number() and float() read exactly), each with `as_float` =
  json.dumps(float(x), allow_nan=False) (or `error`) and, for a whole x, `as_int` = json.dumps(int(x)):
  a policy writes a JS number as one or the other, or refuses it.

Run: python3 scripts/vectors/gen_python_json.py
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test-vectors", "python-json.json")


def dumps(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def floats_in(v, out):
    if isinstance(v, float):
        out.append(json.dumps(v))
    elif isinstance(v, list):
        for x in v:
            floats_in(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            floats_in(x, out)
    return out


TEXTS = [
    ("literals", '[null,true,false]'),
    ("integers", '[0,-0,1,-1,9007199254740991,9007199254740993,-9223372036854775808,18446744073709551616,123456789012345678901234567890]'),
    ("whole floats", '[1.0,-0.0,0.0,1e3,1E16,2.5e+16,100.0e0,123456789012345678.0]'),
    ("float repr", '[1.5,0.1,0.30000000000000004,1e-4,0.0001,9.999e-5,1e-5,1e-7,1e15,999999999999999.9,1e16,1e21,1e22,5e-324,1.7976931348623157e308,-2.5e-7]'),
    ("out of range", '[1E400]'),
    ("out of range, negative", '{"a":[-1e400]}'),
    ("strings", '["","a","\\u00e9","\\ud83d\\ude00","\\u4e2d\\u6587","\\ufeff\\uffff"]'),
    ("escapes", '["\\"\\\\/","\\b\\f\\n\\r\\t","\\u0000\\u0001\\u001f","\\u007f\\u0080\\u009f","\\u2028\\u2029","<&>\'"]'),
    ("key order", '{"b":1,"a":2,"B":3,"":4,"ab":5,"a ":6,"_":7,"~":8}'),
    ("code point order", '{"\\uff61":1,"\\ud83d\\ude00":2,"\\ue000":3,"a\\ud800\\udc00":4,"a\\uffff":5,"a":6,"\\u00e9":7,"\\ud834\\udd1e":8}'),
    ("nested", '{"z":[{"b":[1,{"d":null,"c":true}],"a":"x"}],"y":{},"x":[[],[[]],{}],"w":{"v":{"u":{"t":[0]}}}}'),
    ("proto key", '{"__proto__":{"constructor":[1]},"toString":"s"}'),
    ("empty object", '{}'),
    ("empty array", '[]'),
    ("top-level string", '"\\u00e9\\n"'),
    ("top-level integer", '-12345678901234567890'),
    ("floats in objects", '{"b":1.0,"a":-0.0,"c":[0.5,{"d":1e100}]}'),
    ("whitespace", ' { "k" : [ 1 , 2 ] , "j" : "v" } '),
]

DOUBLES = ["0", "-0", "1", "-1", "1.5", "-1.5", "0.1", "0.0001", "1e-7", "1e16", "9007199254740991", "9007199254740992",
           "-9007199254740992", "1152921504606846976", "1000000000000000.5", "1e20", "123456789012345680000", "1e21", "-1e21",
           "1e22", "1.2345e25", "5e-324", "1.7976931348623157e308", "NaN", "Infinity", "-Infinity"]

texts = []
for name, text in TEXTS:
    v = json.loads(text)
    case = {"name": name, "json": text, "floats": floats_in(v, [])}
    try:
        case["python"] = dumps(v)
    except ValueError as e:
        case["error"] = str(e)
    texts.append(case)

doubles = []
for d in DOUBLES:
    x = float(d)
    case = {"double": d}
    try:
        case["as_float"] = dumps(x)
    except ValueError as e:
        case["error"] = str(e)
    if x == x and abs(x) != float("inf") and x.is_integer():
        case["as_int"] = dumps(int(x))
    doubles.append(case)

with open(OUT, "w", encoding="utf-8") as f:
    json.dump({
        "description": "Python's json.dumps(sort_keys=True, ensure_ascii=False, separators=(',', ':'), allow_nan=False) of JSON texts and of JS numbers read as float and as int; see ts/crypto/python-json.ts and test/crypto/python-json.test.ts.",
        "source": "scripts/vectors/gen_python_json.py, run with Python %d.%d: Python's own json.loads and json.dumps" % sys.version_info[:2],
        "texts": texts,
        "doubles": doubles,
    }, f, ensure_ascii=False, indent=1)
    f.write("\n")
