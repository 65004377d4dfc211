from __future__ import annotations

import math
import random
import struct
from array import array

import pytest

from tea_agent_mini import vectors
from tea_agent_mini.vectors import VectorIndex, cosine, dot, normalize, pack, top_k, unpack


def random_vectors(count: int, dim: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(dim)] for _ in range(count)]


def brute_force(query, items, k, min_score=None):
    """Exact reference: score every vector, sort by score then insertion order."""
    q = normalize(query)
    scored = [
        (sum(a * b for a, b in zip(q, vec, strict=True)), n, key)
        for n, (key, vec) in enumerate(items)
    ]
    scored.sort(key=lambda row: (-row[0], row[1]))
    if min_score is not None:
        scored = [row for row in scored if row[0] >= min_score]
    return [(score, key) for score, _, key in scored[:k]]


def stored(vec) -> array:
    """A vector as VectorIndex keeps it: normalised, rounded to float32."""
    return array("f", normalize(vec))


def assert_same_results(got, expected):
    assert [key for _, key in got] == [key for _, key in expected]
    for (score, _), (want, _) in zip(got, expected, strict=True):
        assert score == pytest.approx(want, abs=1e-12)


# -- pack / unpack --------------------------------------------------------------------------


def test_pack_writes_little_endian_float32():
    assert pack([1.0, -2.5]) == struct.pack("<2f", 1.0, -2.5)
    assert pack([]) == b""


def test_unpack_round_trips_float32_values():
    values = [0.1, -3.75, 1e-30, 12345.678]
    got = unpack(pack(values))
    assert got.typecode == "f"
    assert list(got) == list(array("f", values))


def test_unpack_rejects_truncated_blob():
    with pytest.raises(ValueError, match="multiple of 4"):
        unpack(b"\x00\x00\x80")


# -- normalize / dot / cosine ---------------------------------------------------------------


def test_normalize_gives_unit_length_and_keeps_direction():
    got = normalize([3, 4])
    assert got == pytest.approx([0.6, 0.8])
    assert math.hypot(*normalize(random_vectors(1, 300)[0])) == pytest.approx(1.0)


def test_normalize_keeps_zero_vector():
    assert normalize([0.0, 0, 0.0]) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_normalize_rejects_non_finite(bad):
    with pytest.raises(ValueError, match="NaN or infinite"):
        normalize([1.0, bad])


@pytest.mark.parametrize("use_sumprod", [True, False])
def test_dot_matches_definition_on_both_code_paths(monkeypatch, use_sumprod):
    if not use_sumprod:
        monkeypatch.setattr(vectors, "_sumprod", None)
    elif vectors._sumprod is None:
        pytest.skip("math.sumprod needs Python 3.12+")
    a, b = random_vectors(2, 50)
    assert dot(a, b) == pytest.approx(
        math.fsum(x * y for x, y in zip(a, b, strict=True)), abs=1e-12
    )
    assert dot([1, 2, 3], array("f", [4, 5, 6])) == 32.0
    assert isinstance(dot([], []), float)


@pytest.mark.parametrize("func", [dot, cosine])
def test_dimension_mismatch_is_a_value_error(func):
    with pytest.raises(ValueError, match="expected 3, got 2"):
        func([1.0, 2.0, 3.0], [1.0, 2.0])


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1, 0], [5, 0], 1.0),
        ([1, 0], [0, 2], 0.0),
        ([1, 1], [-3, -3], -1.0),
        ([1, 2], [0, 0], 0.0),
    ],
)
def test_cosine(a, b, expected):
    assert cosine(a, b) == pytest.approx(expected)


# -- top_k ----------------------------------------------------------------------------------


def test_top_k_returns_best_first_and_matches_brute_force():
    vecs = random_vectors(200, 16)
    items = [(f"k{n}", stored(vec)) for n, vec in enumerate(vecs)]
    query = random_vectors(1, 16, seed=99)[0]
    got = top_k(query, iter(items), 5)
    assert_same_results(got, brute_force(query, items, 5))
    assert [score for score, _ in got] == sorted((score for score, _ in got), reverse=True)


def test_top_k_ties_keep_input_order_and_keys_need_not_be_comparable():
    keys = [object() for _ in range(4)]
    items = [(keys[0], [0.0, 1.0]), (keys[1], [1.0, 0.0]), (keys[2], [1.0, 0.0])]
    items.append((keys[3], [1.0, 0.0]))
    got = top_k([2.0, 0.0], items, 3)
    assert [key for _, key in got] == keys[1:4]
    assert [score for score, _ in got] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(("k", "count"), [(0, 0), (-1, 0), (10, 3)])
def test_top_k_bounds(k, count):
    items = [(n, [1.0, float(n)]) for n in range(3)]
    assert len(top_k([1.0, 1.0], items, k)) == count


def test_top_k_rejects_vector_of_other_dimension():
    with pytest.raises(ValueError, match="dimension mismatch"):
        top_k([1.0, 0.0], [("a", [1.0, 0.0]), ("b", [1.0, 0.0, 0.0])], 1)


# -- VectorIndex ----------------------------------------------------------------------------


def build_index(vecs, keys=None) -> tuple[VectorIndex, list]:
    index = VectorIndex(len(vecs[0]))
    keys = keys if keys is not None else list(range(len(vecs)))
    for key, vec in zip(keys, vecs, strict=True):
        index.add(key, vec)
    return index, [(key, stored(vec)) for key, vec in zip(keys, vecs, strict=True)]


@pytest.mark.parametrize(("count", "dim", "k"), [(1, 1, 1), (50, 3, 5), (600, 64, 10)])
def test_index_search_equals_brute_force(count, dim, k):
    index, items = build_index(random_vectors(count, dim))
    assert len(index) == count
    for query in random_vectors(20, dim, seed=11):
        assert_same_results(index.search(query, k), brute_force(query, items, k))


def test_index_stays_exact_when_quantisation_error_exceeds_score_gaps():
    # Near-duplicates differ by far less than the 8-bit codes resolve, so only the exact
    # re-rank can order them; a wrong error bound would drop or misorder results here.
    rng = random.Random(3)
    base = random_vectors(1, 128, seed=5)[0]
    vecs = [[x + rng.gauss(0.0, 1e-3) for x in base] for _ in range(400)]
    vecs += random_vectors(400, 128, seed=6)
    index, items = build_index(vecs)
    for query in [base, [x + rng.gauss(0.0, 1e-3) for x in base], vecs[450]]:
        for k in (1, 10, 50):
            assert_same_results(index.search(query, k), brute_force(query, items, k))


def test_index_min_score_filters_results():
    index, items = build_index(random_vectors(300, 8))
    query = random_vectors(1, 8, seed=2)[0]
    got = index.search(query, 50, min_score=0.5)
    assert got, "the data should have some vectors above 0.5"
    assert all(score >= 0.5 for score, _ in got)
    assert_same_results(got, brute_force(query, items, 50, min_score=0.5))
    assert index.search(query, 5, min_score=1.5) == []


def test_index_ties_follow_insertion_order_and_replacing_keeps_place():
    index = VectorIndex(2)
    for key in "abc":
        index.add(key, [1.0, 1.0])
    index.add("far", [-1.0, 0.0])
    assert [key for _, key in index.search([1.0, 1.0], 3)] == ["a", "b", "c"]
    index.add("b", [2.0, 2.0])  # same direction: b keeps its place
    assert [key for _, key in index.search([1.0, 1.0], 3)] == ["a", "b", "c"]
    index.add("d", [1.0, 1.0])
    index.remove("a")  # the last slot moves into the hole; order must not follow slots
    assert [key for _, key in index.search([1.0, 1.0], 3)] == ["b", "c", "d"]
    index.add("a", [1.0, 1.0])  # re-added: now the newest
    assert [key for _, key in index.search([1.0, 1.0], 4)] == ["b", "c", "d", "a"]


def test_index_add_replaces_vector_of_existing_key():
    index = VectorIndex(2)
    index.add("x", [1.0, 0.0])
    index.add("x", [0.0, 1.0])
    assert len(index) == 1
    assert index.search([0.0, 1.0], 1) == [(pytest.approx(1.0), "x")]


def test_index_remove_keeps_the_rest_searchable():
    vecs = random_vectors(40, 6)
    index, items = build_index(vecs)
    removed = {0, 7, 39, 20}
    for key in removed:
        assert index.remove(key) is True
    assert index.remove(7) is False
    assert len(index) == 36
    assert 7 not in index
    assert 8 in index
    remaining = [(key, vec) for key, vec in items if key not in removed]
    for query in random_vectors(10, 6, seed=4):
        assert_same_results(index.search(query, 40), brute_force(query, remaining, 40))


def test_index_edge_cases():
    index = VectorIndex(3)
    assert index.search([1.0, 0.0, 0.0], 5) == []
    index.add("zero", [0.0, 0.0, 0.0])
    index.add("x", [1.0, 0.0, 0.0])
    assert index.search([1.0, 0.0, 0.0], 0) == []
    assert index.search([1.0, 0.0, 0.0], 5) == [(1.0, "x"), (0.0, "zero")]
    assert index.dim == 3


def test_index_rejects_wrong_dimensions():
    index = VectorIndex(3)
    with pytest.raises(ValueError, match="expected 3, got 2"):
        index.add("a", [1.0, 2.0])
    with pytest.raises(ValueError, match="expected 3, got 4"):
        index.search([1.0, 2.0, 3.0, 4.0], 1)
    with pytest.raises(ValueError, match="positive"):
        VectorIndex(0)


def test_index_first_pass_prunes_most_vectors():
    # Correctness does not depend on this, speed does: a loose error bound would quietly turn
    # every search into an exact scan of the whole index.
    index, _ = build_index(random_vectors(2000, 64))
    query = tuple(normalize(random_vectors(1, 64, seed=8)[0]))
    assert len(list(index._candidates(query, 10, -math.inf))) < 200


# -- sign codes -------------------------------------------------------------------------------


def test_sign_code_sets_a_bit_for_each_negative_component():
    vec = [0.5, -0.25, 0.0, -0.0, -3.0, 1.0, 2.0, -1.0, 0.1, -0.1]
    code = int.from_bytes(vectors.sign_code(pack(vec)), "little")
    assert [bool(code >> i & 1) for i in range(len(vec))] == [math.copysign(1, x) < 0 for x in vec]
    assert len(vectors.sign_code(pack(vec))) == 2  # ten bits in two bytes
    for dim in (1, 8, 9, 256, 1536):
        rng = random.Random(dim)
        vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        code = int.from_bytes(vectors.sign_code(pack(vec)), "little")
        assert code == sum(1 << i for i, x in enumerate(vec) if x < 0)


@pytest.mark.parametrize("blob", [b"", b"\x00" * 6])
def test_sign_code_rejects_what_is_not_a_vector(blob):
    with pytest.raises(ValueError, match="multiple of 4"):
        vectors.sign_code(blob)


def test_nearest_codes_are_the_closest_in_hamming_distance():
    rng = random.Random(3)
    codes = [rng.getrandbits(64) for _ in range(500)]
    query = rng.getrandbits(64)
    distance = [(query ^ code).bit_count() for code in codes]
    found = vectors.nearest_codes(query, codes, 40)
    assert found == sorted(found) and len(found) == 40
    worst_in = max(distance[i] for i in found)
    assert all(distance[i] >= worst_in for i in set(range(500)) - set(found))
    assert sorted(distance[i] for i in found) == sorted(distance)[:40]


def test_nearest_codes_ties_and_bounds():
    codes = [0b11, 0b01, 0b10, 0b00, 0b01]
    assert vectors.nearest_codes(0b00, codes, 1) == [3]
    assert vectors.nearest_codes(0b00, codes, 2) == [1, 3]  # a tie: the earlier one
    assert vectors.nearest_codes(0b00, codes, 9) == [0, 1, 2, 3, 4]
    assert vectors.nearest_codes(0b00, codes, 0) == []
    assert vectors.nearest_codes(0b00, [], 3) == []
