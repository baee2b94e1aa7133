#!/usr/bin/env python3
"""Writes test-vectors/*.json, the project's own byte-exact vectors.

Every expected value here comes from a method independent of the project's code: Python's hashlib,
the `cryptography` package (OpenSSL) for ChaCha20-Poly1305 and X25519, the textbook Ed25519 of
RFC 8032 section 6 (ed25519_ref.py), a pure-Python HChaCha20 from the XChaCha20 draft, and, for
JSON canonicalization, outputs written by hand from RFC 8785 and the ECMAScript rules. Published
values from the RFCs are asserted at generation time, so a slip in this script cannot go unnoticed.

Run: python3 scripts/vectors/gen.py   (needs `pip install cryptography`)
"""
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import ed25519_ref as ed  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test-vectors")


def h(b: bytes) -> str:
    return b.hex()


def write(name, doc):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def seed_of(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


# ---------------------------------------------------------------- Ed25519
def ed25519():
    cases = []

    def signed(name, source, seed, msg):
        a, prefix = ed.secret_expand(seed)
        A = ed.compress(ed.mul(a, ed.G))
        sig = ed.sign_with(a, prefix, A, msg)
        cases.append({"name": name, "source": source, "seed": h(seed), "public_key": h(A),
                      "message": h(msg), "signature": h(sig), "valid": True})
        return a, prefix, A, sig

    rfc = "RFC 8032 section 7.1 (inputs from the RFC; key and signature recomputed with ed25519_ref.py)"
    _, _, _, s1 = signed("rfc8032-test-1", rfc, bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"), b"")
    assert h(s1).startswith("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bac")
    signed("rfc8032-test-2", rfc, bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"), bytes.fromhex("72"))
    _, _, _, s3 = signed("rfc8032-test-3", rfc, bytes.fromhex("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7"), bytes.fromhex("af82"))
    assert h(s3).startswith("6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac")
    signed("rfc8032-test-sha-abc", rfc, bytes.fromhex("833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42"), hashlib.sha512(b"abc").digest())

    hm = "hand-made, ed25519_ref.py"
    seed = seed_of("aigenora ed25519 vector seed 1")
    msg = b"aigenora strict ed25519"
    a, prefix, A, sig = signed("hand-valid", hm, seed, msg)
    base = {"source": hm, "public_key": h(A), "message": h(msg)}

    def bad(name, why, error="SIGNATURE_INVALID", **over):
        c = dict(base, name=name, why=why, valid=False, error=error)
        c.update(over)
        cases.append(c)

    bad("wrong-message", "signature over another message", message=h(msg + b"!"), signature=h(sig))
    flipped = bytearray(sig); flipped[5] ^= 1
    bad("flipped-bit-in-R", "one bit of R changed", signature=h(bytes(flipped)))
    S = int.from_bytes(sig[32:], "little")
    bad("s-plus-l", "S replaced by S + L: the same scalar mod L, but not reduced (rule: S < L)",
        signature=h(sig[:32] + int.to_bytes(S + ed.L, 32, "little")))
    bad("s-high-bit", "S with bit 255 set", signature=h(sig[:32] + int.to_bytes(S | (1 << 255), 32, "little")))

    ident = bytes.fromhex("01" + "00" * 31)
    zero_s = b"\x00" * 32
    # [0]B == R + [k]A holds for A = R = identity: every equation-only verifier accepts these.
    bad("small-order-A-and-R", "A = R = identity, S = 0: the equation holds; small order must reject",
        public_key=h(ident), signature=h(ident + zero_s))
    y1_noncanon = int.to_bytes(ed.p + 1, 32, "little")
    bad("non-canonical-A", "A = identity encoded as y = p + 1 (y >= p), R = identity, S = 0",
        error="PUBLIC_KEY_INVALID", public_key=h(y1_noncanon), signature=h(ident + zero_s))
    bad("non-canonical-A-sign-bit", "A = identity with the sign bit set (x = 0, sign 1)",
        error="PUBLIC_KEY_INVALID", public_key=h(bytes.fromhex("01" + "00" * 30 + "80")), signature=h(ident + zero_s))
    k_r_ident = ed.sha512_int(ident + A + msg) % ed.L
    bad("small-order-R", "R = identity, S = k*a: the cofactorless equation holds; small-order R must reject",
        signature=h(ident + int.to_bytes(k_r_ident * a % ed.L, 32, "little")))
    bad("non-canonical-R", "R = identity encoded as y = p + 1, S = k*a with k over those bytes",
        signature=h(y1_noncanon + int.to_bytes(ed.sha512_int(y1_noncanon + A + msg) % ed.L * a % ed.L, 32, "little")))

    # A mixed-order key A' = aB + T8. A cofactorless-valid signature needs R = rB - [k mod 8]T8, so
    # try r until k = H(R || A' || M) agrees with the guess; a cofactored-only one uses R = rB.
    Ap = ed.add(ed.mul(a, ed.G), ed.T8)
    Ap_b = ed.compress(Ap)
    r = 1
    while True:
        j = r % 7 + 1
        R = ed.compress(ed.add(ed.mul(r, ed.G), ed.mul(8 - j, ed.T8)))
        k = ed.sha512_int(R + Ap_b + msg) % ed.L
        if k % 8 == j:
            break
        r += 1
    s = (r + k * a) % ed.L
    assert ed.equal(ed.mul(s, ed.G), ed.add(ed.decompress(R), ed.mul(k, Ap)))
    cases.append(dict(base, name="mixed-order-A-and-R-accepted",
                      why="A and R have a small-order component; the cofactorless equation holds, so strict accepts",
                      public_key=h(Ap_b), signature=h(R + int.to_bytes(s, 32, "little")), valid=True))
    r = 12345
    while True:
        R = ed.compress(ed.mul(r, ed.G))
        k = ed.sha512_int(R + Ap_b + msg) % ed.L
        if k % 8 != 0:
            break
        r += 1
    s = (r + k * a) % ed.L
    assert not ed.equal(ed.mul(s, ed.G), ed.add(ed.decompress(R), ed.mul(k, Ap)))
    assert ed.equal(ed.mul(8 * s, ed.G), ed.mul(8, ed.add(ed.decompress(R), ed.mul(k, Ap))))
    bad("cofactored-only", "holds only in the cofactored equation [8][S]B = [8]R + [8][k]A: strict rejects",
        public_key=h(Ap_b), signature=h(R + int.to_bytes(s, 32, "little")))
    y_off = next(y for y in range(2, 100) if ed.recover_x(y, 0) is None)
    A_off = int.to_bytes(y_off, 32, "little")
    bad("off-curve-A", f"A encodes y = {y_off}, for which no x is on the curve", error="PUBLIC_KEY_INVALID", public_key=h(A_off), signature=h(sig))
    bad("off-curve-A-small-order-R", "the key is judged before the signature: an off-curve A with R = identity, S = 0",
        error="PUBLIC_KEY_INVALID", public_key=h(A_off), signature=h(ident + zero_s))
    bad("short-key", "31-byte public key", error="BAD_LENGTH", public_key=h(A[:31]), signature=h(sig))
    bad("long-signature", "65-byte signature", error="BAD_LENGTH", signature=h(sig + b"\x00"))
    bad("short-seed-sign", "signing with a 31-byte seed", error="BAD_LENGTH", seed=h(seed[:31]), signature=h(sig))

    write("ed25519.json", {
        "description": "Ed25519 key derivation, deterministic signing and strict verification (policy in ../shared/conformance/README.md and crates/core/src/ed25519.rs). Cases with a seed: the public key and signature must be reproduced from it. Cases with valid=false give the expected error code of verify (or of sign, for short-seed-sign).",
        "source": "scripts/vectors/gen.py: RFC 8032 section 7.1 inputs and hand-made edge cases; expected values from the textbook arithmetic of RFC 8032 section 6 (scripts/vectors/ed25519_ref.py), independent of the project code",
        "cases": cases})


# ---------------------------------------------------------------- SHA-256
def sha256():
    inputs = [("empty", b""), ("abc", b"abc"),
              ("fips-448-bit", b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              ("fips-896-bit", b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
              ("55-bytes", b"a" * 55), ("56-bytes", b"a" * 56), ("64-bytes", b"a" * 64), ("utf8", "héllo ✓ 😀".encode())]
    cases = [{"name": n, "message": h(m), "sha256": hashlib.sha256(m).hexdigest(),
              "prefixed": "sha256:" + hashlib.sha256(m).hexdigest()} for n, m in inputs]
    assert cases[1]["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    cases.append({"name": "million-a", "message_repeat": {"byte": "61", "count": 1000000},
                  "sha256": hashlib.sha256(b"a" * 1000000).hexdigest(),
                  "prefixed": "sha256:" + hashlib.sha256(b"a" * 1000000).hexdigest()})
    write("sha256.json", {"description": "SHA-256 and the 'sha256:' + lowerhex form (agent-trade body_hash / object_id). message_repeat means `count` copies of `byte`.",
                          "source": "FIPS 180-4 example messages and block-boundary lengths; expected digests from Python hashlib",
                          "cases": cases})


# ---------------------------------------------------------------- AEAD
def rotl(v, c):
    return ((v << c) & 0xffffffff) | (v >> (32 - c))


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    st = list(struct.unpack("<4I", b"expand 32-byte k")) + list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))

    def qr(a, b, c, d):
        st[a] = (st[a] + st[b]) & 0xffffffff; st[d] = rotl(st[d] ^ st[a], 16)
        st[c] = (st[c] + st[d]) & 0xffffffff; st[b] = rotl(st[b] ^ st[c], 12)
        st[a] = (st[a] + st[b]) & 0xffffffff; st[d] = rotl(st[d] ^ st[a], 8)
        st[c] = (st[c] + st[d]) & 0xffffffff; st[b] = rotl(st[b] ^ st[c], 7)
    for _ in range(10):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return struct.pack("<8I", *(st[0:4] + st[12:16]))


def xseal(key, nonce24, pt, aad):
    return ChaCha20Poly1305(hchacha20(key, nonce24[:16])).encrypt(b"\x00" * 4 + nonce24[16:], pt, aad)


def aead():
    cases = []
    sunscreen = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
    k80 = bytes(range(0x80, 0xa0))
    aad = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")

    def add(name, source, cipher, key, nonce, pt, aad_):
        sealed = (ChaCha20Poly1305(key).encrypt(nonce, pt, aad_) if cipher == "chacha20-poly1305" else xseal(key, nonce, pt, aad_))
        c = {"name": name, "source": source, "cipher": cipher, "key": h(key), "nonce": h(nonce), "aad": h(aad_),
             "plaintext": h(pt), "sealed": h(sealed), "valid": True}
        cases.append(c)
        return c

    c = add("rfc8439-2.8.2", "RFC 8439 section 2.8.2 inputs; sealed from `cryptography`", "chacha20-poly1305", k80, bytes.fromhex("070000004041424344454647"), sunscreen, aad)
    assert c["sealed"].endswith("1ae10b594f09e26a7e902ecbd0600691")
    x = add("xchacha-draft-a.3.1", "draft-irtf-cfrg-xchacha-03 A.3.1 inputs; sealed from pure-Python HChaCha20 + `cryptography`", "xchacha20-poly1305", k80, bytes(range(0x40, 0x58)), sunscreen, aad)
    assert x["sealed"].endswith("c0875924c1c7987947deafd8780acf49")
    add("empty-plaintext", "hand-made; `cryptography`", "chacha20-poly1305", seed_of("aead key 1"), bytes(12), b"", b"")
    add("empty-plaintext-x", "hand-made; HChaCha20 + `cryptography`", "xchacha20-poly1305", seed_of("aead key 1"), bytes(24), b"", b"hdr")
    big = add("1-kib", "hand-made; `cryptography`", "chacha20-poly1305", seed_of("aead key 2"), bytes(range(12)), bytes(i % 251 for i in range(1024)), b"")

    def bad(name, why, error, base, **over):
        c = dict(base, name=name, why=why, valid=False, error=error)
        c.update(over)
        cases.append(c)
    s = bytearray.fromhex(c["sealed"]); s[-1] ^= 0x80
    bad("tampered-tag", "last tag byte flipped", "AEAD_OPEN_FAILED", c, sealed=h(bytes(s)))
    s = bytearray.fromhex(c["sealed"]); s[0] ^= 1
    bad("tampered-ciphertext", "first ciphertext byte flipped", "AEAD_OPEN_FAILED", c, sealed=h(bytes(s)))
    bad("wrong-aad", "associated data differs", "AEAD_OPEN_FAILED", c, aad=h(aad[:-1]))
    s = bytearray.fromhex(x["sealed"]); s[-3] ^= 4
    bad("tampered-tag-x", "a tag byte flipped", "AEAD_OPEN_FAILED", x, sealed=h(bytes(s)))
    bad("wrong-nonce-x", "another 24-byte nonce", "AEAD_OPEN_FAILED", x, nonce=h(bytes(24)))
    bad("truncated", "sealed shorter than the 16-byte tag", "AEAD_OPEN_FAILED", big, sealed=big["sealed"][:30])
    bad("nonce-length", "an 8-byte nonce for ChaCha20-Poly1305", "BAD_LENGTH", big, nonce=h(bytes(8)))
    bad("nonce-length-x", "a 12-byte nonce for XChaCha20-Poly1305", "BAD_LENGTH", x, nonce=h(bytes(12)))
    bad("key-length", "a 16-byte key", "BAD_LENGTH", big, key=h(bytes(16)))
    write("aead.json", {"description": "ChaCha20-Poly1305 (12-byte nonce) and XChaCha20-Poly1305 (24-byte nonce) seal/open with associated data; sealed = ciphertext || 16-byte tag. valid cases must seal to `sealed` and open to `plaintext`; invalid ones must fail to open with `error` (BAD_LENGTH also on seal).",
                        "source": "scripts/vectors/gen.py: RFC 8439 section 2.8.2 and draft-irtf-cfrg-xchacha-03 A.3.1 inputs (published tags asserted), hand-made cases; expected values from the `cryptography` package (OpenSSL) and a pure-Python HChaCha20",
                        "cases": cases})


# ---------------------------------------------------------------- X25519
def x25519():
    cases = []

    def add(name, source, sk, pk):
        try:
            shared = X25519PrivateKey.from_private_bytes(sk).exchange(X25519PublicKey.from_public_bytes(pk))
            cases.append({"name": name, "source": source, "private_key": h(sk), "public_key": h(pk), "shared": h(shared), "valid": True})
            return shared
        except ValueError:
            cases.append({"name": name, "source": source, "private_key": h(sk), "public_key": h(pk), "valid": False, "error": "X25519_LOW_ORDER"})

    r = "RFC 7748 section 5.2 inputs; shared from `cryptography`"
    s = add("rfc7748-5.2-1", r, bytes.fromhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"), bytes.fromhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"))
    assert h(s) == "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
    add("rfc7748-5.2-2", r, bytes.fromhex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d"), bytes.fromhex("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493"))
    alice = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    bob_pub = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    s = add("rfc7748-6.1-alice", "RFC 7748 section 6.1", alice, bob_pub)
    assert h(s) == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
    base = X25519PrivateKey.from_private_bytes(alice).public_key().public_bytes_raw()
    cases.append({"name": "rfc7748-6.1-alice-public", "source": "RFC 7748 section 6.1; X25519(a, 9) from `cryptography`", "private_key": h(alice), "public_of_private": h(base), "valid": True})
    add("low-order-u0", "hand-made: u = 0 has order 1, the shared secret is all zero", alice, bytes(32))
    add("low-order-u1", "hand-made: u = 1 has order 4", alice, bytes.fromhex("01" + "00" * 31))
    add("high-bit-masked", "hand-made: bit 255 of u must be ignored (RFC 7748 section 5)", alice, bob_pub[:31] + bytes([bob_pub[31] | 0x80]))
    cases.append({"name": "short-public-key", "source": "hand-made", "private_key": h(alice), "public_key": h(bob_pub[:31]), "valid": False, "error": "BAD_LENGTH"})
    write("x25519.json", {"description": "X25519 shared secrets (RFC 7748). The all-zero result from a small-order peer key is refused with X25519_LOW_ORDER. public_of_private: X25519(private, 9).",
                          "source": "scripts/vectors/gen.py: RFC 7748 sections 5.2 and 6.1 inputs (published outputs asserted) and hand-made cases; expected values from the `cryptography` package (OpenSSL)",
                          "cases": cases})


# ---------------------------------------------------------------- commit-reveal
def commit():
    pairs = [("rock", "6f1c2a0e9b8d7c6b5a4f3e2d1c0b9a88"), ("paper", ""), ("", "n"), ("石头", "nonce-✓"), ("a:b", "c")]
    cases = [{"choice": c, "nonce": n, "commit": hashlib.sha256(f"{c}:{n}".encode()).hexdigest()} for c, n in pairs]
    write("commit.json", {"description": "commit = lowerhex(SHA-256(utf8(choice + ':' + nonce))). verify_reveal(commit, choice, nonce) is true for each case and false when any of the three changes.",
                          "source": "scripts/vectors/gen.py; expected values from Python hashlib",
                          "cases": cases})


# ---------------------------------------------------------------- JCS
def jcs():
    cases = []

    def ok(name, source, inp, out):
        cases.append({"name": name, "source": source, "input": inp, "output": out})

    def err(name, why, inp, code):
        cases.append({"name": name, "why": why, "input": inp, "error": code})

    ok("rfc8785-3.2.2", "RFC 8785 section 3.2.2 (input and output as printed there)",
       '{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
       '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    ok("rfc8785-3.2.3-sorting", "RFC 8785 section 3.2.3: keys sorted by UTF-16 code units",
       '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "1": "One",\n  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}',
       '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}')
    # RFC 8785 Appendix B: IEEE-754 bit patterns and their ECMAScript serialisation.
    appendix_b = [("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
                  ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
                  ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
                  ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
                  ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
                  ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
                  ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
                  ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
                  ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
                  ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
                  ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
                  ("43143ff3c1cb0959", "1424953923781206.2")]
    for bits, out in appendix_b:
        v = struct.unpack(">d", bytes.fromhex(bits))[0]
        ok(f"rfc8785-b-{bits}", "RFC 8785 Appendix B (input: Python repr of the double)", "[" + repr(v).replace("inf", "x") + "]", f"[{out}]")
    hm = "hand-made from the ECMAScript rules RFC 8785 adopts"
    ok("integers-beyond-2^53", hm, "[9007199254740993, 18446744073709551616, -9223372036854775809]", "[9007199254740992,18446744073709552000,-9223372036854776000]")
    ok("exponent-forms", hm, "[1E2, 1e-7, 123e-2, 0.1e1, 1e21, 1e20, -0.0, 0e10]", "[100,1e-7,1.23,1,1e+21,100000000000000000000,0,0]")
    ok("string-escapes", hm, '"\\u0000\\u0008\\u0009\\u000a\\u000b\\u000c\\u000d\\u001f\\u0020\\u007f\\/\\u2028"', '"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f \u007f/\u2028"')
    ok("surrogate-pair-escaped", hm, '"\\ud83d\\ude00 \\uD834\\uDD1E"', '"😀 𝄞"')
    ok("astral-vs-bmp-private-use", hm + ": U+1F600 sorts before U+E000 in UTF-16 (D83D < E000) though after it by code point", '{"\ue000":1,"😀":2,"\uffff":3,"a":4}', '{"a":4,"😀":2,"\ue000":1,"\uffff":3}')
    ok("nested-sorting", hm, '{"b":[{"z":1,"y":{"d":0,"c":0}}],"a":{}}', '{"a":{},"b":[{"y":{"c":0,"d":0},"z":1}]}')
    ok("key-prefix-order", hm, '{"ab":1,"a":2,"":3,"b":4}', '{"":3,"a":2,"ab":1,"b":4}')
    ok("whitespace", hm, ' \t\n\r[ 1 ,\n"x" ] \n', '[1,"x"]')
    ok("scalars", hm, 'true', 'true')
    ok("depth-127", hm + ": 127 nested arrays is the limit (crates/core/src/jcs.rs MAX_DEPTH)", "[" * 127 + "]" * 127, "[" * 127 + "]" * 127)
    err("duplicate-key", "I-JSON section 2.3", '{"a":1,"a":2}', "JSON_DUPLICATE_KEY")
    err("duplicate-key-nested", "I-JSON section 2.3, inside an array", '[{"x":{"b":1,"c":2,"b":1}}]', "JSON_DUPLICATE_KEY")
    err("duplicate-key-escaped", "the same key written once escaped: keys compare after unescaping", '{"a":1,"\\u0061":2}', "JSON_DUPLICATE_KEY")
    err("lone-high-surrogate", "I-JSON section 2.1", '"\\ud800"', "JSON_LONE_SURROGATE")
    err("lone-low-surrogate", "I-JSON section 2.1", '["\\udc00"]', "JSON_LONE_SURROGATE")
    err("high-surrogate-then-char", "I-JSON section 2.1", '"\\ud800x"', "JSON_LONE_SURROGATE")
    err("reversed-surrogates", "I-JSON section 2.1", '"\\udc00\\ud800"', "JSON_LONE_SURROGATE")
    err("lone-surrogate-in-key", "I-JSON section 2.1", '{"\\udfff":0}', "JSON_LONE_SURROGATE")
    err("number-overflow", "I-JSON section 2.2: not a finite double", "[1e400]", "JSON_NUMBER_RANGE")
    err("number-overflow-negative", "I-JSON section 2.2", "-1e400", "JSON_NUMBER_RANGE")
    err("number-overflow-long", "I-JSON section 2.2", "[" + "9" * 400 + "]", "JSON_NUMBER_RANGE")
    err("nan", "not JSON", "[NaN]", "JSON_SYNTAX")
    err("trailing-comma", "not JSON", '{"a":1,}', "JSON_SYNTAX")
    err("missing-comma", "not JSON", "[1 2]", "JSON_SYNTAX")
    err("leading-zero", "not JSON", "[01]", "JSON_SYNTAX")
    err("single-quotes", "not JSON", "['a']", "JSON_SYNTAX")
    err("raw-control-char", "not JSON: U+0001 unescaped in a string", '"a\u0001"', "JSON_SYNTAX")
    err("trailing-garbage", "not JSON", "{} x", "JSON_SYNTAX")
    err("empty", "not JSON", "", "JSON_SYNTAX")
    err("depth-128", "nesting deeper than 127", "[" * 128 + "]" * 128, "JSON_TOO_DEEP")
    err("depth-128-objects", "nesting deeper than 127, objects", '{"a":' * 128 + "1" + "}" * 128, "JSON_TOO_DEEP")
    # Which error a text with several faults gets: the first one met reading it from the left, as a
    # streaming parser meets it. An object's keys are checked for repeats when its '}' is read; a
    # number is complete where the JSON number grammar stops taking characters, and is range-checked there.
    order = "reading order: the first fault met from the left"
    err("truncation-before-duplicate-check", order + ": the text ends before the '}' where repeated keys are found", '{"a":1,"a":2', "JSON_SYNTAX")
    err("bad-value-before-duplicate-check", order + ": the bad value comes before the '}'", '{"a":1,"a":x}', "JSON_SYNTAX")
    err("number-range-before-duplicate-check", order, '{"a":1,"a":1e400}', "JSON_NUMBER_RANGE")
    err("duplicate-before-trailing-garbage", order, '{"a":1,"a":2} x', "JSON_DUPLICATE_KEY")
    err("inner-duplicate-before-outer-fault", order + ": the inner object closes first", '{"x":{"a":1,"a":2},"y":1e400}', "JSON_DUPLICATE_KEY")
    err("inner-fault-before-outer-duplicate", order, '{"a":{"b":1e400},"a":1}', "JSON_NUMBER_RANGE")
    err("duplicate-in-array-before-garbage", order, '[{"a":1,"a":2},x]', "JSON_DUPLICATE_KEY")
    err("lone-surrogate-before-duplicate-check", order, '{"a":"\\udc00","a":1}', "JSON_LONE_SURROGATE")
    err("depth-before-duplicate-check", order, '{"a":1,"a":' + "[" * 200, "JSON_TOO_DEEP")
    err("duplicate-unsorted", "a key repeated after the keys stopped arriving in order", '{"b":1,"a":2,"c":3,"b":4}', "JSON_DUPLICATE_KEY")
    err("duplicate-escaped-unsorted", "the repeat is written escaped, out of order", '{"b":1,"a\\n":2,"c":3,"a\\u000a":4}', "JSON_DUPLICATE_KEY")
    err("duplicate-in-large-unsorted-object", "200 keys in descending order, then the first again",
        "{" + ",".join(f'"k{i:03}":{i}' for i in range(199, -1, -1)) + ',"k199":0}', "JSON_DUPLICATE_KEY")
    ok("escaped-keys-sort-by-their-characters", hm + ": keys compare as characters, not as their escapes (\\n is U+000A, before 'A')",
       '{"A":1,"\\n":2,"\\"":3,"\\\\":4,"\\u001f":5,"\\u0000":6}', '{"\\u0000":6,"\\n":2,"\\u001f":5,"\\"":3,"A":1,"\\\\":4}')
    err("number-range-then-dot", order + ": 1e400 is a complete number when '.' follows it", "[1e400.]", "JSON_NUMBER_RANGE")
    err("number-range-then-e", order + ": 1.5e400 is complete when a second 'e' follows", "[1.5e400e]", "JSON_NUMBER_RANGE")
    err("number-range-then-sign", order, "[1e400-1]", "JSON_NUMBER_RANGE")
    err("number-range-then-garbage", order, "[" + "9" * 400 + ",x]", "JSON_NUMBER_RANGE")
    err("long-integer-then-dot", "a fraction needs a digit: the number is malformed before it is complete", "[" + "9" * 400 + ".]", "JSON_SYNTAX")
    err("long-integer-then-e", "an exponent needs a digit", "[" + "9" * 400 + "e]", "JSON_SYNTAX")
    err("leading-zero-then-range", "the second digit after a leading 0 is met before the exponent", "[01e400]", "JSON_SYNTAX")
    err("fraction-without-digit", "not JSON", "[1.e5]", "JSON_SYNTAX")
    err("high-surrogate-at-end-of-text", "the text ends inside the string before the pair can be completed", '"\\ud800', "JSON_SYNTAX")
    err("high-surrogate-then-backslash-at-end", "the text ends inside the escape that would complete the pair", '"\\ud800\\', "JSON_SYNTAX")
    err("high-surrogate-then-short-escape", "the escape after a high surrogate is malformed", '"\\ud800\\u12"', "JSON_SYNTAX")
    err("high-surrogate-then-other-escape", "I-JSON section 2.1: a high surrogate followed by \\n", '"\\ud800\\n"', "JSON_LONE_SURROGATE")
    err("high-surrogate-then-invalid-escape", "a high surrogate followed by a backslash that does not start \\u", '"\\ud800\\x"', "JSON_LONE_SURROGATE")
    err("high-surrogate-then-high", "I-JSON section 2.1", '"\\ud800\\ud800"', "JSON_LONE_SURROGATE")
    err("high-surrogate-then-control-char", order + ": the unpaired surrogate before the raw U+0001", '"\\ud800\u0001"', "JSON_LONE_SURROGATE")
    err("control-char-then-lone-surrogate", order + ": the raw U+0001 before the unpaired surrogate", '"\u0001\\ud800"', "JSON_SYNTAX")
    err("lone-surrogate-before-syntax", order, '["\\udc00" x', "JSON_LONE_SURROGATE")
    err("syntax-before-lone-surrogate", order, '[x "\\udc00"]', "JSON_SYNTAX")
    err("depth-before-duplicate", order, '{"a":' + "[" * 200 + "]" * 200 + ',"a":1}', "JSON_TOO_DEEP")
    write("jcs.json", {"description": "RFC 8785 canonicalization from JSON text. `output` is the exact canonical text (compare its UTF-8 bytes); `error` is the stable code for text that is not I-JSON.",
                       "source": "scripts/vectors/gen.py: RFC 8785 sections 3.2.2, 3.2.3 and Appendix B, and hand-made cases whose outputs were written by hand from the ECMAScript Number/JSON.stringify rules",
                       "cases": cases})

# ---------------------------------------------------------------- AGBX1 box and proof of work
P25519 = 2**255 - 19


def x25519_public_from_ed25519(pk: bytes) -> bytes:
    y = int.from_bytes(pk, "little") & ((1 << 255) - 1)
    u = (1 + y) * pow((1 - y) % P25519, P25519 - 2, P25519) % P25519
    return u.to_bytes(32, "little")


def ed_public(seed: bytes) -> bytes:
    return ed.compress(ed.mul(ed.secret_expand(seed)[0], ed.G))


def x25519_private_from_seed(seed: bytes) -> bytes:
    d = bytearray(hashlib.sha512(seed).digest()[:32])
    d[0] &= 248
    d[31] &= 127
    d[31] |= 64
    return bytes(d)


def box():
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    cases = []
    src = "computed here: the Edwards-to-Montgomery map by its formula, X25519, HKDF-SHA256 and ChaCha20-Poly1305 from `cryptography`"
    for label, text in [("empty", ""), ("hello", "hello"), ("unicode", "é漢字🙂 " * 20), ("max-256", "x" * 256)]:
        seed = seed_of(f"box recipient {label}")
        pk = ed_public(seed)
        xpub = x25519_public_from_ed25519(pk)
        xpriv = x25519_private_from_seed(seed)
        # The two conversions agree: the converted private key's X25519 public key is the converted public key.
        assert X25519PrivateKey.from_private_bytes(xpriv).public_key().public_bytes_raw() == xpub
        eph = seed_of(f"box ephemeral {label}")
        nonce = seed_of(f"box nonce {label}")[:12]
        epk = X25519PrivateKey.from_private_bytes(eph).public_key().public_bytes_raw()
        shared = X25519PrivateKey.from_private_bytes(eph).exchange(X25519PublicKey.from_public_bytes(xpub))
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"aigenora-inbox-v1").derive(shared)
        pt = text.encode()
        boxed = b"AGBX1" + epk + nonce + ChaCha20Poly1305(key).encrypt(nonce, pt, None)
        cases.append({"name": f"seal-{label}", "source": src, "ed25519_seed": h(seed), "ed25519_public": h(pk), "x25519_public": h(xpub), "x25519_private": h(xpriv),
                      "ephemeral_private": h(eph), "nonce": h(nonce), "plaintext": h(pt), "box": h(boxed), "valid": True})
        if label == "hello":
            good = boxed
            good_seed = seed
    bad = lambda name, note, b, err, seed=good_seed: cases.append({"name": name, "source": f"hand-made from seal-hello: {note}", "ed25519_seed": h(seed), "box": h(b), "valid": False, "error": err})
    bad("too-short", "64 bytes, one under the minimum", good[:64], "BOX_TOO_SHORT")
    bad("bad-magic", "AGBX2", b"AGBX2" + good[5:], "BOX_BAD_MAGIC")
    bad("flipped-tag", "last byte flipped", good[:-1] + bytes([good[-1] ^ 1]), "AEAD_OPEN_FAILED")
    bad("flipped-ephemeral", "a bit of the ephemeral key flipped", good[:6] + bytes([good[6] ^ 2]) + good[7:], "AEAD_OPEN_FAILED")
    bad("wrong-recipient", "opened with another recipient's seed", good, "AEAD_OPEN_FAILED", seed_of("box recipient empty"))
    bad("zero-ephemeral", "ephemeral u = 0 (order 1)", good[:5] + bytes(32) + good[37:], "X25519_LOW_ORDER")
    write("box.json", {"description": "AGBX1 sealed box (NOTES A15): box = \"AGBX1\" || ephemeral X25519 public || nonce(12) || ChaCha20-Poly1305(HKDF-SHA256(X25519(eph, recipient), no salt, info \"aigenora-inbox-v1\"), plaintext, no AAD); the recipient's X25519 keys come from its Ed25519 key (u = (1+y)/(1-y); clamped SHA-512 of the seed). Invalid boxes are refused with `error`.",
                       "source": "scripts/vectors/gen.py: " + src + "; the refusals hand-made from one sealed box",
                       "cases": cases})

    pcases = []
    for nonce, label, diff in [("a1b2c3", "k1", 0), ("a1b2c3", "k1", 1), ("challenge-0042", "k2", 1), ("ffee", "k3", 2)]:
        pk = h(ed_public(seed_of(f"pow {label}")))
        counter = 0
        while hashlib.sha256(f"{nonce}{pk}{counter}".encode()).digest()[:diff] != bytes(diff):
            counter += 1
        pcases.append({"name": f"pow-{label}-{diff}", "nonce": nonce, "public_key": pk, "difficulty": diff, "counter": counter})
    write("pow.json", {"description": "Registration proof of work (NOTES A9): the smallest counter >= 0 such that SHA-256 of UTF-8(nonce + public_key + decimal(counter)) starts with `difficulty` zero bytes.",
                       "source": "scripts/vectors/gen.py: searched here with hashlib",
                       "cases": pcases})


if __name__ == "__main__":
    ed25519(); sha256(); aead(); x25519(); commit(); jcs(); box()
    print("wrote", sorted(f for f in os.listdir(OUT) if f.endswith(".json")))
