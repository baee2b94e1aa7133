#!/usr/bin/env python3
"""Writes test-vectors/agent-trade/*.json: envelope verification cases and trade state transitions.

Independent of the project's code: bodies are canonicalized with Python's json.dumps (sort_keys,
compact, ensure_ascii=False), which equals RFC 8785 for the bodies used here (ASCII keys, integers,
strings, no floats: asserted below), hashed with hashlib and signed with the `cryptography` package.
Expected verdicts follow agent-trade/0.2 section 3 and NOTES.md B2 (order: protocol, body_hash,
object_id, schema, then each signature: unknown signer, bad signature); the state table follows B4.

Run: python3 scripts/vectors/gen_trade.py   (needs `pip install cryptography`)
"""
import base64
import copy
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import ed25519_ref as ed  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test-vectors", "agent-trade")
PROTO = "agent-trade/0.2"


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jcs(v) -> str:
    def check(x):
        assert not isinstance(x, float), "floats are not canonicalized the same way by json.dumps"
        if isinstance(x, dict):
            assert all(k.isascii() for k in x)
            for y in x.values():
                check(y)
        if isinstance(x, list):
            for y in x:
                check(y)
    check(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def body_hash(body) -> str:
    return "sha256:" + hashlib.sha256(jcs(body).encode()).hexdigest()


def signing_input(proto, otype, bhash) -> bytes:
    return proto.encode() + b"\x00" + otype.encode() + b"\x00" + bhash.encode()


def object_id(env) -> str:
    return "sha256:" + hashlib.sha256(signing_input(env["protocol"], env["object_type"], env["body_hash"])).hexdigest()


SEEDS = {name: hashlib.sha256(f"aigenora agent-trade vector {name}".encode()).digest() for name in ["alice", "bob", "mallory"]}
KEYS = {n: Ed25519PrivateKey.from_private_bytes(s) for n, s in SEEDS.items()}
PUB = {n: k.public_key().public_bytes_raw() for n, k in KEYS.items()}
IDENTITIES = {f"agent_{n}": {"public_key": b64u(PUB[n]), "seed": b64u(SEEDS[n])} for n in SEEDS}
# A small-order "key": the identity point. Its signature (R = identity, S = 0) satisfies the
# verification equation for every message, which is exactly why the strict policy refuses it.
IDENTITY_POINT = bytes.fromhex("01" + "00" * 31)
IDENTITIES["agent_small_order"] = {"public_key": b64u(IDENTITY_POINT)}
IN_MAP = ["agent_alice", "agent_bob", "agent_small_order"]  # agent_mallory is deliberately left out


def envelope(otype, body):
    return {"protocol": PROTO, "object_type": otype, "body": body, "body_hash": body_hash(body), "signatures": []}


def sign(env, who, at="2026-11-30T10:00:00Z", over=None):
    data = signing_input(env["protocol"], env["object_type"], over or env["body_hash"])
    env["signatures"].append({"signer": f"agent_{who}", "algorithm": "Ed25519", "signature": b64u(KEYS[who].sign(data)), "issued_at": at})
    return env


TRADE_ID = "019ad3f0-6a2e-7c41-9d3b-5f0e8a7b6c21"
LISTING = {"publisher": "agent_alice", "catalog_id": "catalog-1", "catalog_hash": "sha256:" + "ab" * 32, "item_id": "item-7",
           "item_revision": 2, "distribution_refs": [{"type": "https", "uri": "https://example.org/item-7"}]}
DEAL = {"trade_id": TRADE_ID, "buyer": "agent_bob", "seller": "agent_alice",
        "subject": {"listing_ref": "sha256:" + "cd" * 32, "description": "Ten bird-song recordings, \"field\" quality\n", "quantity": 10,
                    "acceptance_conditions": ["FLAC, 48 kHz", "Ünïcödé titles kept"]},
        "settlement": {"asset": "iso4217:EUR", "amount": "125.50", "method": "manual-settlement"},
        "fulfillment": {"deadline": "2026-12-24T00:00:00Z", "destination_ref": "private_inbox", "carrier_ref": "email"}}
EVENT = {"event_id": "evt-1", "trade_id": TRADE_ID, "event_type": "PAYMENT_CONFIRMED", "actor": "agent_bob", "occurred_at": "2026-12-01T09:30:00Z",
         "evidence": {"note": "bank transfer"}}
RECEIPT = {"receipt_id": "rcpt-1", "trade_id": TRADE_ID, "contract_hash": "sha256:" + "ef" * 32, "subject": "agent_alice",
           "direction": "buyer_to_seller", "result": "COMPLETED", "rating": "POSITIVE",
           "metrics": {"specification_match": True, "delivery_hours": 30, "communication_score": 5, "overall_score": 4},
           "transaction_summary": {"category": "audio", "amount_disclosure": "range", "amount_range": ["100", "200.5"]}}


def main():
    cases = []

    def add(name, why, env=None, expect="valid", text=None, object_id_=None, signers=None):
        c = {"name": name, "why": why}
        if text is not None:
            c["file_text"] = text
        else:
            c["file"] = copy.deepcopy(env)
        if object_id_:
            c["object_id"] = object_id_
        c["expect"] = expect
        if expect == "valid":
            c["expected_object_id"] = object_id(env if env is not None else json.loads(text))
        cases.append(c)

    listing = sign(envelope("LISTING_REF", LISTING), "alice")
    add("listing-ref-valid", "one signature", listing)
    deal_ab = sign(sign(envelope("DEAL", DEAL), "alice"), "bob", "2026-11-30T10:05:00Z")
    add("deal-cosigned-alice-then-bob", "co-signature: the second signature leaves the first valid", deal_ab)
    deal_ba = sign(sign(envelope("DEAL", DEAL), "bob"), "alice", "2026-11-30T10:05:00Z")
    add("deal-cosigned-bob-then-alice", "the other order: same object_id", deal_ba)
    assert object_id(deal_ab) == object_id(deal_ba)
    event = sign(envelope("TRADE_EVENT", EVENT), "bob")
    add("trade-event-valid", "single signer", event)
    receipt = sign(envelope("TRADE_RECEIPT", RECEIPT), "bob")
    add("trade-receipt-valid", "single signer, metrics and a range", receipt)
    add("declared-object-id-matches", "an out-of-band object_id equal to the recomputed one", deal_ab, object_id_=object_id(deal_ab))
    add("declared-object-id-differs", "step 2", deal_ab, "fail:object_id_mismatch", object_id_="sha256:" + "00" * 32)

    e = copy.deepcopy(deal_ab); e["protocol"] = "agent-trade/0.1"
    add("protocol-0.1", "step 0: exact match only, no migration", e, "fail:protocol_version")
    e = copy.deepcopy(deal_ab); del e["protocol"]
    add("protocol-missing", "step 0", e, "fail:protocol_version")
    e = copy.deepcopy(deal_ab); e["body"]["subject"]["quantity"] = 11
    add("body-changed-hash-kept", "step 1: the attack of the reference's deal-tampered-body-keep-hash", e, "fail:body_hash_mismatch")
    e["body_hash"] = body_hash(e["body"])
    add("body-changed-hash-recomputed", "step 4: the signatures were over the old hash", e, "fail:signature_invalid")
    e = copy.deepcopy(deal_ab); e["body_hash"] = e["body_hash"].upper().replace("SHA256:", "sha256:")
    add("body-hash-upper-case", "step 1 compares the exact string", e, "fail:body_hash_mismatch")
    # A protocol check comes first even when everything else is also wrong.
    e = copy.deepcopy(deal_ab); e["protocol"] = "x"; e["body"]["buyer"] = "agent_eve"
    add("order-protocol-before-hash", "step 0 reported before step 1", e, "fail:protocol_version")
    e = copy.deepcopy(deal_ab); e["body"]["extra"] = 1
    add("order-hash-before-schema", "step 1 reported before step 3", e, "fail:body_hash_mismatch")

    def schema_case(name, why, otype, body_edit=None, env_edit=None, signers=("alice",)):
        base = {"LISTING_REF": LISTING, "DEAL": DEAL, "TRADE_EVENT": EVENT, "TRADE_RECEIPT": RECEIPT}[otype]
        body = copy.deepcopy(base)
        if body_edit:
            body_edit(body)
        env = envelope(otype, body)
        for s in signers:
            sign(env, s)
        if env_edit:
            env_edit(env)
        add(name, why, env, "fail:schema_invalid")

    def setp(path, value):
        def f(d):
            for k in path[:-1]:
                d = d[k]
            if value is DELETE:
                del d[path[-1]]
            else:
                d[path[-1]] = value
        return f
    DELETE = object()
    schema_case("schema-extra-envelope-field", "additionalProperties false at the root", "DEAL", env_edit=setp(["note"], "hi"))
    schema_case("schema-extra-body-field", "additionalProperties false in body", "DEAL", setp(["memo"], "x"))
    schema_case("schema-missing-required", "body.fulfillment is required", "DEAL", setp(["fulfillment"], DELETE))
    schema_case("schema-amount-leading-zero", "decimal ^(0|[1-9][0-9]*)(\\.[0-9]{1,8})?$", "DEAL", setp(["settlement", "amount"], "0125.50"))
    schema_case("schema-amount-nine-decimals", "at most 8 fraction digits", "DEAL", setp(["settlement", "amount"], "1.123456789"))
    schema_case("schema-amount-number", "amounts are strings", "DEAL", setp(["settlement", "amount"], 125))
    schema_case("schema-trade-id-v4", "trade_id must be a UUID v7", "DEAL", setp(["trade_id"], "0f8fad5b-d9cb-469f-a165-70867728950e"))
    schema_case("schema-quantity-zero", "quantity >= 1", "DEAL", setp(["subject", "quantity"], 0))
    schema_case("schema-no-acceptance-conditions", "acceptance_conditions minItems 1", "DEAL", setp(["subject", "acceptance_conditions"], []))
    schema_case("schema-deadline-not-date-time", "format date-time", "DEAL", setp(["fulfillment", "deadline"], "next tuesday"))
    schema_case("schema-object-type-unknown", "object_type must name one of the four schemas", "DEAL", env_edit=setp(["object_type"], "INVOICE"))
    schema_case("schema-signature-85-chars", "signature pattern ^[A-Za-z0-9_-]{86}$", "DEAL",
                env_edit=lambda e: e["signatures"][0].__setitem__("signature", e["signatures"][0]["signature"][:85]))
    schema_case("schema-algorithm", "algorithm const Ed25519", "DEAL", env_edit=lambda e: e["signatures"][0].__setitem__("algorithm", "EdDSA"))
    schema_case("schema-issued-at", "issued_at format date-time", "DEAL", env_edit=lambda e: e["signatures"][0].__setitem__("issued_at", "2026-13-40"))
    schema_case("schema-no-signatures", "signatures minItems 1", "DEAL", signers=())
    schema_case("schema-event-two-signatures", "TRADE_EVENT is single-signer (maxItems 1)", "TRADE_EVENT", signers=("bob", "alice"))
    schema_case("schema-event-type", "event_type enum", "TRADE_EVENT", setp(["event_type"], "REFUNDED"))
    schema_case("schema-receipt-two-signatures", "TRADE_RECEIPT is single-signer", "TRADE_RECEIPT", signers=("bob", "alice"))
    schema_case("schema-receipt-score", "overall_score 1..5", "TRADE_RECEIPT", setp(["metrics", "overall_score"], 6))
    schema_case("schema-receipt-range-length", "amount_range has exactly 2 items", "TRADE_RECEIPT", setp(["transaction_summary", "amount_range"], ["1"]))
    schema_case("schema-receipt-direction", "direction enum", "TRADE_RECEIPT", setp(["direction"], "sideways"))
    schema_case("schema-listing-distribution-type", "distribution_refs type enum", "LISTING_REF", setp(["distribution_refs"], [{"type": "ftp", "uri": "ftp://x"}]))
    schema_case("schema-listing-catalog-hash", "catalog_hash pattern", "LISTING_REF", setp(["catalog_hash"], "ab" * 32))
    schema_case("schema-listing-revision", "item_revision integer >= 0", "LISTING_REF", setp(["item_revision"], -1))

    e = sign(envelope("DEAL", DEAL), "mallory")
    add("unknown-signer", "agent_mallory is not in the key map", e, "fail:unknown_signer")
    e = sign(sign(envelope("DEAL", DEAL), "alice"), "mallory")
    add("second-signer-unknown", "signatures are checked in order; the first is valid", e, "fail:unknown_signer")
    e = copy.deepcopy(deal_ab)
    sig = bytearray(base64.urlsafe_b64decode(e["signatures"][1]["signature"] + "==")); sig[10] ^= 0x40
    e["signatures"][1]["signature"] = b64u(bytes(sig))
    add("second-signature-tampered", "one bit of bob's R flipped", e, "fail:signature_invalid")
    e = copy.deepcopy(deal_ab); e["signatures"][0]["signer"] = "agent_bob"
    add("signature-under-wrong-name", "alice's signature labelled as bob's", e, "fail:signature_invalid")
    e = copy.deepcopy(listing)
    raw = base64.urlsafe_b64decode(e["signatures"][0]["signature"] + "==")
    s_plus_l = int.from_bytes(raw[32:], "little") + ed.L
    e["signatures"][0]["signature"] = b64u(raw[:32] + s_plus_l.to_bytes(32, "little"))
    add("non-canonical-s", "S + L verifies in lax implementations; strict refuses S >= L", e, "fail:signature_invalid")
    e = envelope("TRADE_EVENT", EVENT)
    e["signatures"].append({"signer": "agent_small_order", "algorithm": "Ed25519", "signature": b64u(IDENTITY_POINT + b"\x00" * 32), "issued_at": "2026-11-30T10:00:00Z"})
    add("small-order-key", "A = R = identity, S = 0 satisfies the equation for any message: strict refuses small-order keys", e, "fail:signature_invalid")

    good = json.dumps(event, ensure_ascii=False)
    dup = good.replace('"event_id": "evt-1"', '"event_id": "evt-1", "event_id": "evt-2"')
    assert dup != good
    add("duplicate-key-in-body", "strict JSON gate before anything else (seed 003 section 5)", text=dup, expect="fail:malformed_input")
    add("lone-surrogate-in-body", "I-JSON: \\udc00 alone", text=good.replace('"bank transfer"', '"bank \\udc00 transfer"'), expect="fail:malformed_input")
    add("number-out-of-range", "I-JSON: 1e400 is not a finite double", text=good.replace('"evidence": {', '"evidence": {"x": 1e400, '), expect="fail:malformed_input")
    add("not-json", "truncated text", text=good[:-5], expect="fail:malformed_input")
    add("valid-as-text", "the same event, parsed from text", text=good, expect="valid")

    doc = {"description": "agent-trade/0.2 envelope verification. `file` is an envelope object, or `file_text` raw JSON text (strictly parsed: a text that is not I-JSON is refused before verification with fail:malformed_input, an extension of the reference's seven codes). Verify with the key map `identities` restricted to the ids in `key_map`; `object_id`, when present, is the declared (out-of-band) object_id of step 2; `expect` is the first failure, and `expected_object_id` the object_id of a valid file.",
           "source": "scripts/vectors/gen_trade.py: bodies canonicalized by Python json.dumps (equal to RFC 8785 for these bodies, asserted), hashed by hashlib, signed by the `cryptography` package; verdicts from agent-trade/0.2 section 3 and ../shared/reference/NOTES.md B2",
           "warning": "test seeds only: never use them for anything real",
           "identities": IDENTITIES, "key_map": IN_MAP, "cases": cases}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "envelopes.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False); f.write("\n")
    state_vectors()
    print("wrote", len(cases), "envelope cases")


# ---------------------------------------------------------------- state machine (NOTES B4)
STATES = ["AGREED", "PAYMENT_PENDING", "PAYMENT_CONFIRMED", "FULFILLING", "SHIPPED", "DELIVERED", "COMPLETED", "DISPUTED", "CANCELLED"]
EVENTS = ["DEAL_SIGNED", "PAYMENT_REQUESTED", "PAYMENT_CONFIRMED", "ESCROWED", "FULFILLING", "SHIPPED", "DELIVERED", "COMPLETED", "DISPUTED", "RESOLVED", "CANCELLED"]
FORWARD = {"PAYMENT_REQUESTED": ("AGREED", "PAYMENT_PENDING"), "PAYMENT_CONFIRMED": ("PAYMENT_PENDING", "PAYMENT_CONFIRMED"),
           "ESCROWED": ("PAYMENT_PENDING", "PAYMENT_CONFIRMED"), "FULFILLING": ("PAYMENT_CONFIRMED", "FULFILLING"),
           "SHIPPED": ("FULFILLING", "SHIPPED"), "DELIVERED": ("SHIPPED", "DELIVERED"), "COMPLETED": ("DELIVERED", "COMPLETED")}
TERMINAL = {"COMPLETED", "CANCELLED"}
# Shortest event paths that reach each state (a dispute remembers AGREED here).
PATHS = {"AGREED": ["DEAL_SIGNED"]}
for ev, (a, b) in FORWARD.items():
    if b not in PATHS:
        PATHS[b] = PATHS[a] + [ev]
PATHS["DISPUTED"] = ["DEAL_SIGNED", "PAYMENT_REQUESTED", "DISPUTED"]
PATHS["CANCELLED"] = ["DEAL_SIGNED", "CANCELLED"]


def step(state, remembered, ev):
    """(next_state, remembered) or None when the transition is not allowed."""
    if state is None:
        return ("AGREED", None) if ev == "DEAL_SIGNED" else None
    if state in TERMINAL or ev == "DEAL_SIGNED":
        return None
    if ev == "DISPUTED":
        return ("DISPUTED", remembered if state == "DISPUTED" else state)
    if ev == "RESOLVED":
        return (remembered, None) if state == "DISPUTED" else None
    if ev == "CANCELLED":
        return ("CANCELLED", None)
    a, b = FORWARD[ev]
    return (b, remembered) if state == a else None


def run(events):
    state, remembered = None, None
    for i, ev in enumerate(events):
        nxt = step(state, remembered, ev)
        if nxt is None:
            return {"rejected_at": i, "state_before": state}
        state, remembered = nxt
    return {"state": state}


def state_vectors():
    cases = [{"name": "empty", "events": [], "expect": {"state": None}}]
    cases.append({"name": "first-event-not-deal-signed", "events": ["PAYMENT_REQUESTED"], "expect": run(["PAYMENT_REQUESTED"])})
    for s in STATES:
        for ev in EVENTS:
            events = PATHS[s] + [ev]
            cases.append({"name": f"{s}+{ev}", "events": events, "expect": run(events)})
    extra = [
        ("dispute-returns-to-pre-dispute-state", ["DEAL_SIGNED", "PAYMENT_REQUESTED", "ESCROWED", "FULFILLING", "DISPUTED", "RESOLVED", "SHIPPED"]),
        ("double-dispute-keeps-first-memory", ["DEAL_SIGNED", "PAYMENT_REQUESTED", "DISPUTED", "DISPUTED", "RESOLVED", "PAYMENT_CONFIRMED"]),
        ("cancel-while-disputed", ["DEAL_SIGNED", "DISPUTED", "CANCELLED", "RESOLVED"]),
        ("full-happy-path", ["DEAL_SIGNED", "PAYMENT_REQUESTED", "PAYMENT_CONFIRMED", "FULFILLING", "SHIPPED", "DELIVERED", "COMPLETED"]),
        ("no-skipping-payment", ["DEAL_SIGNED", "FULFILLING"]),
        ("completed-is-terminal", ["DEAL_SIGNED", "PAYMENT_REQUESTED", "PAYMENT_CONFIRMED", "FULFILLING", "SHIPPED", "DELIVERED", "COMPLETED", "DISPUTED"]),
    ]
    cases += [{"name": n, "events": e, "expect": run(e)} for n, e in extra]
    doc = {"description": "Trade state machine: fold `events` (event_type values of verified TRADE_EVENTs, in order). expect.state is the final state (null before any event), or expect.rejected_at the index of the first event the table refuses, with the state before it.",
           "source": "scripts/vectors/gen_trade.py: an independent Python encoding of agent-trade/0.2 section 4 as written in ../shared/reference/NOTES.md B4; every (reachable state, event) pair",
           "cases": cases}
    with open(os.path.join(OUT, "state.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False); f.write("\n")
    print("wrote", len(cases), "state cases")


if __name__ == "__main__":
    main()
