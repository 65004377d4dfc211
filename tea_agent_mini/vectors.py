"""Float32 vectors in pure Python: BLOB packing, dot/cosine, top-k search.

Vectors are stored as little-endian float32 BLOBs and normalised on insert, so cosine similarity
is a plain dot product. ``VectorIndex`` keeps an 8-bit quantised copy of every vector for a fast
first pass and the float32 copy for an exact re-rank, so its results equal a brute-force search.
"""

from __future__ import annotations

import heapq
import math
import sys
import threading
from array import array
from collections.abc import Hashable, Iterable, Sequence
from itertools import compress, islice, repeat
from operator import add, eq, ge, gt, itemgetter, mul, sub, truediv, xor
from typing import Any

__all__ = [
    "VectorIndex",
    "cosine",
    "dot",
    "nearest_codes",
    "normalize",
    "pack",
    "sign_code",
    "top_k",
    "unpack",
]

_BIG_ENDIAN = sys.byteorder == "big"
_sumprod = getattr(math, "sumprod", None)  # Python 3.12+

# Room for rounding in the quantised pass (its own error is ~1e-11), so the bound never
# drops a vector whose exact score would have made the top k.
_SLACK = 1e-7


def pack(vec: Iterable[float]) -> bytes:
    """Pack numbers as a little-endian float32 BLOB."""
    arr = array("f", vec)
    if _BIG_ENDIAN:
        arr.byteswap()
    return arr.tobytes()


def unpack(blob: bytes) -> array:
    """Unpack a BLOB written by :func:`pack` into ``array('f')``."""
    if len(blob) % 4:
        raise ValueError(f"vector blob length {len(blob)} is not a multiple of 4 bytes")
    arr = array("f")
    arr.frombytes(blob)
    if _BIG_ENDIAN:
        arr.byteswap()
    return arr


# The sign bit of a little-endian float32 is the top bit of its fourth byte.
_SIGN_DIGITS = bytes.maketrans(bytes(range(256)), b"0" * 128 + b"1" * 128)


def sign_code(blob: bytes) -> bytes:
    """One bit a component of a :func:`pack` BLOB, set where the component is negative.

    Bit ``i`` of ``int.from_bytes(code, "little")`` is component ``i``. Two vectors' codes
    differ in few bits when the vectors point the same way, so XOR and ``int.bit_count`` rank
    a whole store in C before the few best are scored exactly (see :func:`nearest_codes`).
    """
    if not blob or len(blob) % 4:
        raise ValueError(f"vector blob length {len(blob)} is not a positive multiple of 4 bytes")
    digits = blob[3::4].translate(_SIGN_DIGITS)[::-1]  # component 0 becomes the lowest bit
    return int(digits, 2).to_bytes((len(blob) // 4 + 7) // 8, "little")


def nearest_codes(code: int, codes: Sequence[int], m: int) -> list[int]:
    """The positions in ``codes`` of the ``m`` codes closest to ``code`` in Hamming distance,
    in position order (ties at the cut-off go to the earlier positions)."""
    n = len(codes)
    if m >= n:
        return list(range(n))
    if m <= 0:
        return []
    distances = list(map(int.bit_count, map(xor, repeat(code, n), codes)))
    cut = heapq.nsmallest(m, distances)[-1]
    below = list(compress(range(n), map(gt, repeat(cut, n), distances)))
    at_cut = compress(range(n), map(eq, repeat(cut, n), distances))
    below.extend(islice(at_cut, m - len(below)))
    below.sort()
    return below


def normalize(vec: Iterable[float]) -> list[float]:
    """Scale to unit length; a zero vector stays zero.

    Raises:
        ValueError: a component is NaN or infinite.
    """
    values = list(map(float, vec))
    norm = math.hypot(*values)
    if not math.isfinite(norm):
        raise ValueError("vector has a NaN or infinite component")
    if norm == 0.0:
        return values
    return list(map(truediv, values, repeat(norm)))


def _check_dim(expected: int, got: int) -> None:
    if expected != got:
        raise ValueError(f"vector dimension mismatch: expected {expected}, got {got}")


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """Dot product of two equally long vectors."""
    _check_dim(len(a), len(b))
    if _sumprod is not None:
        return float(_sumprod(a, b))
    return float(sum(map(mul, a, b)))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    _check_dim(len(a), len(b))
    denom = math.hypot(*a) * math.hypot(*b)
    return dot(a, b) / denom if denom else 0.0


def top_k(
    query: Sequence[float], items: Iterable[tuple[Hashable, Sequence[float]]], k: int
) -> list[tuple[float, Hashable]]:
    """The ``k`` best ``(score, key)`` pairs, highest first; equal scores keep input order.

    The query is normalised; ``score`` is its dot product with each vector, i.e. the cosine
    when the vectors were normalised on insert.
    """
    if k <= 0:
        return []
    q = tuple(normalize(query))
    dim = len(q)

    def scored() -> Iterable[tuple[float, Hashable]]:
        for key, vec in items:
            _check_dim(dim, len(vec))
            yield dot(q, vec), key

    return heapq.nlargest(k, scored(), key=itemgetter(0))


def _quantise(values: list[float], centre: tuple[int, ...]) -> tuple[bytes, float, float, float]:
    """8-bit codes of a vector and what a search needs with them: ``(codes, |codes - 128|^2,
    0.5 / scale, error bound)``, where ``codes = round(values * scale) + 128``."""
    peak = max(map(abs, values))
    scale = 127.0 / peak if peak else 1.0
    shifted = list(map(add, map(mul, values, repeat(scale)), repeat(128.0)))
    codes = bytes(map(int, map(add, shifted, repeat(0.5))))  # round half up, all in 1..255
    err = math.dist(shifted, codes) / scale  # |values - (codes - 128) / scale|
    # The squared distance is an integer below 2**53, so rounding recovers it exactly.
    code_sq = float(round(math.dist(codes, centre) ** 2))
    return codes, code_sq, 0.5 / scale, err + _SLACK


class VectorIndex:
    """In-memory cosine index of normalised float32 vectors, keyed by any hashable.

    Each vector is kept twice: as float32 (4 bytes a component) for exact scores, and as 8-bit
    codes (1 byte a component) that ``math.dist`` scans in C. Every code carries a proven bound
    on its error, so the first pass keeps exactly the vectors that could still reach the top k
    and only those are scored exactly. Thread-safe.
    """

    def __init__(self, dim: int) -> None:
        if dim <= 0:
            raise ValueError(f"vector dimension must be positive, got {dim}")
        self._dim = dim
        self._slots: dict[Hashable, int] = {}
        # Parallel per-slot columns; removal swaps the last slot into the hole.
        self._keys: list[Hashable] = []
        self._seq: list[int] = []  # insertion order, to keep ties stable
        self._exact: list[array] = []
        self._codes: list[bytes] = []  # round(v * scale) + 128, all in 1..255
        self._code_sq: list[float] = []  # |codes - 128|^2
        self._half_inv_scale: list[float] = []
        self._err: list[float] = []  # |v - (codes - 128) / scale| + slack
        self._next_seq = 0
        self._centre = (128,) * dim
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self._dim

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._slots

    def add(self, key: Hashable, vec: Sequence[float]) -> None:
        """Insert ``vec`` (normalised here) under ``key``, replacing any vector already there."""
        _check_dim(self._dim, len(vec))
        exact = array("f", normalize(vec))
        row = (exact, *_quantise(exact.tolist(), self._centre))
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                self._slots[key] = len(self._keys)
                self._keys.append(key)
                self._seq.append(self._next_seq)
                self._next_seq += 1
                for column, value in zip(self._columns(), row, strict=True):
                    column.append(value)
            else:
                for column, value in zip(self._columns(), row, strict=True):
                    column[slot] = value

    def remove(self, key: Hashable) -> bool:
        """Drop ``key``; returns False when it was not there."""
        with self._lock:
            slot = self._slots.pop(key, None)
            if slot is None:
                return False
            last = len(self._keys) - 1
            columns: tuple[list[Any], ...] = (self._keys, self._seq, *self._columns())
            for column in columns:
                column[slot] = column[last]
                column.pop()
            if slot != last:
                self._slots[self._keys[slot]] = slot
            return True

    def search(
        self, query: Sequence[float], k: int, min_score: float | None = None
    ) -> list[tuple[float, Hashable]]:
        """The ``k`` best ``(cosine, key)`` pairs, highest first; ties in insertion order.

        ``min_score`` drops results scoring below it.
        """
        _check_dim(self._dim, len(query))
        if k <= 0:
            return []
        q = tuple(normalize(query))
        floor = -math.inf if min_score is None else min_score
        with self._lock:
            slots = self._candidates(q, k, floor)
            exact, seq = self._exact, self._seq
            scores = [(dot(q, exact[i]), i) for i in slots]
            best = heapq.nsmallest(k, scores, key=lambda pair: (-pair[0], seq[pair[1]]))
            return [(score, self._keys[i]) for score, i in best if score >= floor]

    def _candidates(self, q: tuple[float, ...], k: int, floor: float) -> Iterable[int]:
        """Slots whose exact score may still reach the top k and ``floor``."""
        n = len(self._keys)
        # With c = codes - 128: math.dist(q + 128, codes) == |q - c|, computed in C, and
        # q . c = (|q|^2 + |c|^2 - |q - c|^2) / 2; dividing by scale approximates q . v.
        shifted = tuple(x + 128.0 for x in q)
        q_sq = math.fsum(x * x for x in q)
        dists = map(math.dist, repeat(shifted), self._codes)
        approx = [
            (q_sq + c_sq - d * d) * h
            for c_sq, d, h in zip(self._code_sq, dists, self._half_inv_scale, strict=True)
        ]
        # |q| <= 1, so the exact score lies within err of the approximate one.
        threshold = floor
        if n > k:
            lower = heapq.nlargest(k, map(sub, approx, self._err))[-1]
            threshold = max(threshold, lower)
        if threshold == -math.inf:
            return range(n)
        upper = map(add, approx, self._err)
        return compress(range(n), map(ge, upper, repeat(threshold)))

    def _columns(self) -> tuple[list, ...]:
        return (self._exact, self._codes, self._code_sq, self._half_inv_scale, self._err)
