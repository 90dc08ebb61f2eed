"""The end of a reproduction script: it prints what JAX returns and what it should return, and
exits 1 while they differ (0 once JAX behaves), so a maintainer can run it as a test.

Vocabulary:

* an *outcome* is an expression in the script's own names (``f(*args)``, ``constrained(*args)``)
  whose value a check of the property judged; a property names them when it builds its ``Case``
  (``outcomes = {check name prefix: expression}``);
* the *verdict lines* run that expression once more and judge it as the check did: values within
  the check's tolerances (each addressable shard too, against its block), the call returning where
  it raised, or raising where it returned;
* literals: an array is written as numpy code that rebuilds it exactly, as a plain list where its
  repr is exact (``np.array([[0, 1], [2, 3]], dtype=np.int32)``, ``np.arange(8, ...)`` for a
  range), else from its bytes.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

PLAIN_LIMIT = 256  # elements up to which an array is written as a plain list


def dtype_literal(dtype) -> str:
    name = np.dtype(dtype).name
    return {"bfloat16": "jnp.bfloat16", "bool": "np.bool_"}.get(name, f"np.{name}")  # (np.bool: numpy 2 only)


def array_literal(x) -> str:
    """An expression that rebuilds ``x`` exactly (same dtype, shape and bits)."""
    x = np.asarray(x)
    dtype = dtype_literal(x.dtype)
    shape = tuple(x.shape)
    if x.size == 0:
        return f"np.zeros({shape}, dtype={dtype})"
    if x.dtype.kind in "iub" and x.size and x.ndim and x.dtype.kind != "b" and \
            np.array_equal(x.ravel(), np.arange(x.size)):
        return f"np.arange({x.size}, dtype={dtype})" + (f".reshape({shape})" if x.ndim > 1 else "")
    plain = x.dtype.kind in "iub" or (x.dtype.kind in "fc" and x.dtype.name != "bfloat16"
                                     and bool(np.isfinite(x).all()))
    if plain and x.size <= PLAIN_LIMIT:  # (tolist gives Python numbers, whose repr round-trips)
        return f"np.array({x.tolist()!r}, dtype={dtype})"
    return f"np.frombuffer(bytes.fromhex('{x.tobytes().hex()}'), dtype={dtype}).reshape({shape})"


def values_lines(expression: str, expected, *, rtol: float = 0.0, atol=0.0, bits: bool = False) -> List[str]:
    """Judge ``expression``'s value (and, for a sharded array, every addressable shard against its
    block) against ``expected``: within ``rtol``/``atol`` (NaN matching NaN), or bit for bit.
    ``atol`` is a number, or an array of ``expected``'s shape (a bound per element)."""
    expected = np.asarray(expected)
    per_element = np.ndim(atol) > 0
    tolerance = "atol[i]" if per_element else f"{atol}"
    same = ("lambda a, b, i=(): a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()"
            if bits else
            f"lambda a, b, i=(): a.shape == b.shape and a.dtype == b.dtype and "
            f"bool(np.isclose(a.astype(np.complex128), "
            f"b.astype(np.complex128), rtol={rtol}, atol={tolerance}, equal_nan=True).all())")
    return [
        "import sys",
        f"expected = {array_literal(expected)}",
        *([f"atol = {array_literal(np.asarray(atol, np.float64))}  # the bound of each element"]
          if per_element else []),
        f"got = {expression}",
        f"same = {same}",
        "shards_agree = all(same(np.asarray(s.data), expected[s.index], s.index) "
        "for s in getattr(got, 'addressable_shards', ()))",
        "print('got:     ', np.asarray(got).dtype, np.asarray(got).tolist())",
        "print('expected:', expected.dtype, expected.tolist())",
        "if same(np.asarray(got), expected) and not shards_agree:",
        "    print('(the whole array agrees, but a shard does not hold its block)')",
        "sys.exit(0 if same(np.asarray(got), expected) and shards_agree else 1)",
    ]


def float64_outcome(expression: str) -> str:
    """An outcome as a check judges it that compares float64 copies (``np.asarray(...).astype(np.float64)``),
    so the script's value has the dtype the check saw."""
    return f"np.asarray({expression}).astype(np.float64)"


def dtype_outcome(expression: str) -> str:
    """An outcome as a dtype check judges it: the name of the dtype of ``expression``'s value
    (``np.asarray(...).dtype.name``, "bfloat16" for ml_dtypes' bfloat16)."""
    return f"np.asarray({expression}).dtype.name"


def returns_lines(expression: str) -> List[str]:
    """The call should return: exit 1 while it raises, as it runs or as its result is computed
    (``jax.block_until_ready``: JAX dispatches asynchronously, so an error the executable meets
    while it runs is raised only when the result is waited for)."""
    return [
        "import sys",
        "try:",
        f"    got = jax.block_until_ready({expression})",
        "except Exception as e:",
        "    print('raised:', type(e).__name__, str(e)[:1000])",
        "    print('expected: a result, no exception')",
        "    sys.exit(1)",
        "print('returned, as it should:', type(got).__name__, getattr(got, 'shape', ''))  "
        "# (not its value: a printed value can fail on its own)",
        "sys.exit(0)",
    ]


def raises_lines(expression: str, errors: Sequence[str]) -> List[str]:
    """The call should raise one of ``errors`` (class names, or a subclass of one): exit 1 while it
    returns (or raises something else)."""
    names = set(errors)
    return [
        "import sys",
        "try:",
        f"    got = jax.block_until_ready({expression})  # (an error met while it runs is raised here)",
        "except Exception as e:",
        f"    ok = any(c.__name__ in {sorted(names)!r} for c in type(e).__mro__)  # (a subclass counts, as for except)",
        "    print('raised:', type(e).__name__, str(e)[:1000])",
        f"    print('expected: {' or '.join(sorted(names))}')",
        "    sys.exit(0 if ok else 1)",
        "print('returned:', got)",
        f"print('expected: {' or '.join(sorted(names))}')",
        "sys.exit(1)",
    ]


def equal_lines(expression: str, expected) -> List[str]:
    """A plain value (a shape, a dtype name, a count) that should equal ``expected``."""
    return [
        "import sys",
        f"got = {expression}",
        f"expected = {expected!r}",
        "print('got:     ', got)",
        "print('expected:', expected)",
        "sys.exit(0 if got == expected else 1)",
    ]


def index_map_lines(expression: str, expected: dict) -> List[str]:
    """Judge the index map of ``expression`` (a sharding, or an array's sharding) against
    ``expected`` ({device id: ((start, stop) per dimension)}), listing the devices that differ."""
    shape = tuple(max(block[d][1] for block in expected.values())
                  for d in range(len(next(iter(expected.values()), ()))))
    return [
        "import sys",
        f"expected = {dict(sorted(expected.items()))!r}",
        f"value = {expression}",
        f"index_map = getattr(value, 'sharding', value).devices_indices_map({shape!r})",
        f"got = {{d.id: tuple((s.indices(n)[0], s.indices(n)[1]) for s, n in zip(index, {shape!r})) "
        "for d, index in index_map.items()}",
        "for device in sorted(set(got) | set(expected)):",
        "    if got.get(device) != expected.get(device):",
        "        print(f'device {device}: holds {got.get(device)}, but should hold {expected.get(device)}')",
        "print('index maps agree' if got == expected else 'index maps differ')",
        "sys.exit(0 if got == expected else 1)",
    ]


def layout_lines(expression: str, blocks: dict, shape: Sequence[int], shard_shape: Sequence[int], x=None) -> List[str]:
    """Judge the layout of the array ``expression``: its sharding's index map is ``blocks``
    ({device id: ((start, stop) per dimension)} of global ``shape``); its addressable shards are
    one per device of ``blocks``, each covering its block, living on its device alone, of
    ``shard_shape`` and (given ``x``, the global value) holding ``x[block]`` bit for bit."""
    shape, shard_shape = tuple(shape), tuple(shard_shape)
    lines = [
        "import sys",
        f"expected = {dict(sorted(blocks.items()))!r}",
        f"got = {expression}",
        f"block = lambda index: tuple((s.indices(n)[0], s.indices(n)[1]) for s, n in zip(index, {shape!r}))",
        f"index_map = {{d.id: block(i) for d, i in got.sharding.devices_indices_map({shape!r}).items()}}",
        "shards = {s.device.id: s for s in got.addressable_shards}",
        "problems = [f'device {d}: sharding maps {index_map.get(d)}, but should map {expected.get(d)}'",
        "            for d in sorted(set(index_map) | set(expected)) if index_map.get(d) != expected.get(d)]",
        "if sorted(shards) != sorted(expected):",
        "    problems.append(f'shards on devices {sorted(shards)}, but should be on {sorted(expected)}')",
        "for d, s in sorted(shards.items()):",
        "    if block(s.index) != expected.get(d):",
        "        problems.append(f'device {d}: shard holds {block(s.index)}, but should hold {expected.get(d)}')",
        "    if {e.id for e in s.data.devices()} != {d}:",
        "        problems.append(f'device {d}: shard data on devices {sorted(e.id for e in s.data.devices())}, "
        "but should be on [{d}]')",
        f"    if tuple(s.data.shape) != {shard_shape!r}:",
        f"        problems.append(f'device {{d}}: shard shape {{tuple(s.data.shape)}}, but should be {shard_shape!r}')",
    ]
    if x is not None:
        lines[1:1] = [f"x_expected = {array_literal(np.asarray(x))}"]
        lines += [
            "    want = x_expected[s.index]",
            "    if np.asarray(s.data).dtype != want.dtype or np.asarray(s.data).tobytes() != want.tobytes():",
            "        problems.append(f'device {d}: shard data {np.asarray(s.data).tolist()}, "
            "but should be {want.tolist()}')",
        ]
    lines += [
        "print('\\n'.join(problems) if problems else 'laid out as it should be')",
        "sys.exit(1 if problems else 0)",
    ]
    return lines


# Script lines defining ``picture_labels(text)``: the cells' texts of the first picture that
# visualize_array_sharding printed in ``text``, row by row (the top border's corners split the
# columns), as conformance.model.picture reads them.
PICTURE_LABELS_LINES = [
    "def picture_labels(text):",
    "    lines = [line.rstrip() for line in text.splitlines() if line.strip()]",
    "    edges = [i for i, c in enumerate(lines[0]) if c in '┌┬┐']",
    "    rows, row = [], []",
    "    for line in lines[1:]:",
    "        if line[0] in '├└':",
    "            rows.append(row)",
    "            row = []",
    "            if line[0] == '└':",
    "                break",
    "        else:",
    "            row.append(line)",
    "    return [[' '.join(' '.join(line[a + 1:b].split()) for line in row).strip() for a, b in zip(edges, edges[1:])]",
    "            for row in rows]",
]


def indented(lines: Sequence[str], indent: str) -> List[str]:
    return [indent + line for line in lines]


def outcome_name(outcomes: dict, what: str) -> Optional[str]:
    """The outcome a check named ``what`` reads: the one of its own name, else the longest name it
    extends word by word (``loss`` for ``loss sharding devices_indices_map`` or ``loss.shape``, never
    for ``losses``); None without one."""
    if what in outcomes:
        return what
    names = [name for name in outcomes
             if name and what.startswith(name) and not (name[-1].isalnum() and what[len(name)].isalnum())]
    return max(names, key=len) if names else None


def outcome_for(outcomes: dict, what: str) -> Optional[str]:
    """The expression of the outcome check ``what`` reads (``outcome_name``; None without one)."""
    name = outcome_name(outcomes, what)
    return None if name is None else outcomes[name]
