"""Textbook Ed25519 arithmetic in pure Python, after the reference code in RFC 8032 section 6.

Used only to *generate* test vectors independently of the project's Rust and TypeScript code: it is
slow, not constant time, and must never sign anything real.
"""
import hashlib

p = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
d = (-121665 * pow(121666, p - 2, p)) % p
I = pow(2, (p - 1) // 4, p)


def sha512_int(b: bytes) -> int:
    return int.from_bytes(hashlib.sha512(b).digest(), "little")


def add(P, Q):
    x1, y1, z1, t1 = P
    x2, y2, z2, t2 = Q
    A = (y1 - x1) * (y2 - x2) % p
    B = (y1 + x1) * (y2 + x2) % p
    C = t1 * 2 * d * t2 % p
    D = z1 * 2 * z2 % p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % p, G * H % p, F * G % p, E * H % p)


def mul(s: int, P):
    Q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            Q = add(Q, P)
        P = add(P, P)
        s >>= 1
    return Q


def equal(P, Q) -> bool:
    x1, y1, z1, _ = P
    x2, y2, z2, _ = Q
    return (x1 * z2 - x2 * z1) % p == 0 and (y1 * z2 - y2 * z1) % p == 0


def recover_x(y: int, sign: int):
    if y >= p:
        return None
    x2 = (y * y - 1) * pow(d * y * y + 1, p - 2, p) % p
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (p + 3) // 8, p)
    if (x * x - x2) % p != 0:
        x = x * I % p
    if (x * x - x2) % p != 0:
        return None
    if (x & 1) != sign:
        x = p - x
    return x


gy = 4 * pow(5, p - 2, p) % p
gx = recover_x(gy, 0)
G = (gx, gy, 1, gx * gy % p)


def compress(P) -> bytes:
    x, y, z, _ = P
    zi = pow(z, p - 2, p)
    x, y = x * zi % p, y * zi % p
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def decompress(s: bytes):
    """Decodes without the canonical check, as lenient verifiers do (y is reduced mod p)."""
    y = int.from_bytes(s, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = recover_x(y % p, sign)
    if x is None:
        return None
    return (x, y % p, 1, x * (y % p) % p)


def secret_expand(seed: bytes):
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def sign_with(a: int, prefix: bytes, A_bytes: bytes, msg: bytes) -> bytes:
    r = sha512_int(prefix + msg) % L
    R = compress(mul(r, G))
    k = sha512_int(R + A_bytes + msg) % L
    s = (r + k * a) % L
    return R + int.to_bytes(s, 32, "little")


# The point of order 8 with positive x, and its multiples: all eight small-order points.
T8 = decompress(bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"))
SMALL_ORDER = [mul(i, T8) for i in range(8)]
