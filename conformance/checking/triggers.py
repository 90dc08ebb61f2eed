"""Triggers: what a drawn example must be for a random property's known deviation to excuse its
failure. A known-deviation entry of a random property names one (``trigger = "<name>"``); an
example that fails with the entry's symptom is excused only when the trigger holds for it (for a
program, for the failing step or, in a jit way, for a step the failing output depends on).

Vocabulary:

* a ``Call`` is one operation of the catalogue as an example or a program step runs it: the entry's
  name, numpy operands and static arguments, the mesh and its axis type, each operand's spec and
  the output's (a value computed inside a program has the spec our model derives for it; the
  output's is None where nothing lays it out: an eager call, whose output follows its operands),
  the way it runs (a ``conformance.checking.ways.Way``), the
  result's shape and, for a program's step, the steps that compute its operands (``producers``, so
  that a trigger whose bug needs two steps reads both) and, for the step a program's failure was
  localized to, its own ``values`` (expected, got: what a symptom's ``where`` reads);
* a spec *cuts* when it puts an axis of size > 1 on a dimension; None puts no axis anywhere (what
  ``P()`` does), so it cuts nothing;
* the other random properties (shard_map bodies, autodiff, vmap) pass their own drawn example
  objects; their triggers say which attributes they read.

Each trigger is a function registered by ``@trigger(family)`` under its own name (the name an
entry gives), grouped below by the family of operations or the property whose examples it reads;
its docstring states its rule in one sentence, and it reads its example's named attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple
from types import SimpleNamespace

import ml_dtypes
import numpy as np

from conformance.model import sharding_rules
from conformance.model.layout import Layout, MeshModel, Spec, spec_axes
from conformance.model.program import LAYOUT_CHANGES

from .ways import Way


# --- the registry: each trigger is registered by ``@trigger(family)`` ---------------------------
TRIGGERS: Dict[str, Callable[[object], bool]] = {}
FAMILY: Dict[str, str] = {}  # each trigger's family: the operations or property whose examples it reads


def trigger(family: str):
    """Register the decorated rule as the trigger of its own name, serving ``family``."""
    def register(rule: Callable[[object], bool]) -> Callable[[object], bool]:
        assert rule.__name__ not in TRIGGERS, f"trigger {rule.__name__} is defined twice"
        TRIGGERS[rule.__name__] = rule
        FAMILY[rule.__name__] = family
        return rule
    return register


def holds(name: str, candidates: Sequence[object]) -> bool:
    """Whether trigger ``name`` holds for one of ``candidates`` (the failing example, or the steps
    a program's failing value depends on)."""
    rule = TRIGGERS[name]
    return any(rule(c) for c in candidates)


@dataclass(frozen=True)
class Call:
    """One catalogue operation as run (see the module's vocabulary)."""

    op: str
    operands: Tuple[np.ndarray, ...]
    static: dict = field(default_factory=dict)
    mesh: Optional[MeshModel] = None
    axis_type: str = "Auto"
    in_specs: Tuple[Optional[Spec], ...] = ()
    out_spec: Optional[Spec] = None
    way: Optional[Way] = None  # (a label or a letter is read as its Way)
    result_shape: Optional[Tuple[int, ...]] = None
    producers: Tuple[Optional["Call"], ...] = ()  # a program step's: the step computing each operand (None: an input)
    beside: Tuple["Call", ...] = ()  # a program step's: the program's other steps reading its first operand
    read_by: Tuple["Call", ...] = ()  # a program step's: the program's steps reading its result
    values: Optional[tuple] = field(default=None, compare=False, repr=False)  # a localized step's (expected, got)

    def __post_init__(self):
        if self.way is not None and not isinstance(self.way, Way):
            object.__setattr__(self, "way", Way.of(self.way) if self.way else None)

    @property
    def eager(self) -> bool:
        return self.way is Way.EAGER


def axes_of(spec: Optional[Spec], rank: int) -> Tuple[Tuple[str, ...], ...]:
    """The mesh axes on each of ``rank`` dimensions of ``spec`` (trailing dimensions replicated)."""
    axes = spec_axes(spec or ())
    return tuple(axes) + ((),) * (rank - len(axes))


def cut_axes(mesh: MeshModel, axes: Sequence[str]) -> Tuple[str, ...]:
    return tuple(a for a in axes if mesh.axis_sizes[a] > 1)


def cut_ways(mesh: MeshModel, axes: Sequence[str]) -> int:
    """Into how many shards ``axes`` (one dimension's mesh axes) cut it."""
    return int(np.prod([mesh.axis_sizes[a] for a in cut_axes(mesh, axes)]))


def shards_as_long(m: int, n: int, ways: int) -> bool:
    """Whether a prefix of ``m`` of a dimension of ``n`` cut ``ways`` ways has shards as long as the
    whole dimension's (ceil(m / ways) == ceil(n / ways))."""
    return -(-m // ways) == -(-n // ways)


def cuts(mesh: MeshModel, spec: Optional[Spec]) -> bool:
    """Whether ``spec`` puts an axis of size > 1 on a dimension (None, no spec known, cuts nothing)."""
    return any(cut_axes(mesh, axes) for axes in spec_axes(spec or ()))


def cuts_dim(mesh: MeshModel, spec: Optional[Spec], dim: int) -> bool:
    """Whether ``spec`` cuts dimension ``dim``."""
    axes = spec_axes(spec or ())
    return dim < len(axes) and bool(cut_axes(mesh, axes[dim]))


def uses_a_size_one_axis(mesh: MeshModel, spec: Optional[Spec]) -> bool:
    return spec is not None and any(mesh.axis_sizes[a] == 1 for axes in spec_axes(spec) for a in axes)


def names_an_axis(spec: Optional[Spec]) -> bool:
    """Whether ``spec`` (a known one) puts any mesh axis on a dimension, one of size 1 included
    (as an Explicit type names it)."""
    return spec is not None and any(axes for axes in spec_axes(spec))


def explicit_first_operand_cut(call: Call, ops: Sequence[str]) -> bool:
    """On an Explicit mesh, one of ``ops`` whose first operand is cut."""
    return call.axis_type == "Explicit" and call.op in ops and bool(call.in_specs) and cuts(call.mesh, call.in_specs[0])


def output_may_be_cut(call: Call) -> bool:
    """Jitted: the requested output spec cuts; eager: the output follows the inputs, so an operand
    is cut."""
    if call.eager:
        return any(cuts(call.mesh, s) for s in call.in_specs)
    return cuts(call.mesh, call.out_spec)


def over_combined_axes(mesh: MeshModel, spec: Optional[Spec]) -> bool:
    """``spec`` puts two or more mesh axes of size > 1 on one dimension."""
    return any(len(cut_axes(mesh, axes)) > 1 for axes in spec_axes(spec or ()))


def partially_replicated(mesh: MeshModel, spec: Optional[Spec]) -> bool:
    """``spec`` cuts over some axis of size > 1 and leaves another unused (each block is held by
    several devices)."""
    used = {a for axes in spec_axes(spec or ()) for a in axes}
    big = {a for a, n in mesh.axis_sizes.items() if n > 1}
    return bool(used & big) and bool(big - used)


def start_needs_clamping(call: Call) -> bool:
    """A lax.dynamic_slice whose start (a negative one counted from the end) lies outside
    ``[0, size - slice size]`` on some dimension."""
    x, starts = call.operands[0], call.operands[1:]
    return any(not 0 <= int(s) + (n if s < 0 else 0) <= n - k
               for s, n, k in zip(starts, np.shape(x), call.static["sizes"]))


# What XLA moves a slice through (a layout change: an annotation; a unary elementwise operation of
# the catalogue, family "elementwise": the simplifier slices its operand instead).
ANY_LAYOUT_CHANGE = (LAYOUT_CHANGES
                     + ("layout change of a layout change",))  # (how step_call names one of another's result)
PASSED_OVER = ANY_LAYOUT_CHANGE + ("negative", "abs", "sin", "exp", "logical_not")
JOINS_AND_COPIES = ("stack", "concatenate", "broadcast_to") + PASSED_OVER  # (what carries a value's elements on)


JOINS = ("concatenate", "stack", "pad", "roll")  # the catalogue's operations built on concatenate


def index_parts(index) -> tuple:
    """A static index (``x[index]``) as the tuple of its parts, one per leading dimension."""
    return index if isinstance(index, tuple) else (index,)


def strided_dims(index) -> Tuple[int, ...]:
    """The dimensions a static index steps along by more than one (or backwards)."""
    return tuple(d for d, s in enumerate(index_parts(index)) if isinstance(s, slice) and s.step not in (None, 1))


def prefix_slice_dims_with_the_operands_shard_shape(call: Call) -> Tuple[int, ...]:
    """The dimensions that a jitted static slice shortens as
    ``jitted_prefix_slice_with_its_operands_shard_shape`` says (none for any other call)."""
    if call.op not in STATIC_SLICES or call.eager or not call.in_specs or not call.operands:
        return ()
    index = index_parts(call.static.get("index", ()))
    shape = np.shape(call.operands[0])
    found = []
    for dim in range(len(shape)):
        part = index[dim] if dim < len(index) else slice(None)
        if not isinstance(part, slice):
            continue
        start, stop, step = part.indices(shape[dim])
        m = len(range(start, stop, step))
        if any(ways > 1 and step == 1 and start == 0 and 0 < m < n and shards_as_long(m, n, ways)
               for n, ways in ((n, cut_ways(call.mesh, axes)) for n, axes in _prefix_sources(call, dim, stop))):
            found.append(dim)
    return tuple(found)


def pad_prefix_reads(mode: str, low: int, high: int, n: int) -> Tuple[int, ...]:
    """The lengths ``m`` (0 < m < n) of the prefixes [0:m] of a dimension of ``n`` that jnp.pad reads to
    fill that dimension's edges (``low``, ``high``) in ``mode``: an edge pad's low edge reads x[0:1], a
    symmetric pad's x[0:low]; a wrap pad's high edge reads x[0:high], a reflect pad's x[n - 1 - high:n - 1],
    a prefix where high is n - 1 (widths wider than the dimension, which jnp.pad fills in rounds, are
    not read here)."""
    reads = []
    if low > 0 and mode == "edge":
        reads.append(1)
    if 0 < low < n and mode == "symmetric":
        reads.append(low)
    if 0 < high < n and mode == "wrap":
        reads.append(high)
    if high > 0 and high == n - 1 and mode == "reflect":
        reads.append(n - 1)
    return tuple(m for m in reads if 0 < m < n)


def keeps_its_value(op: str, static: dict, operand_shape, result_shape) -> bool:
    """Whether a program step returns its first operand's value as it is, a step XLA folds away: a
    layout change, a static slice that keeps the whole operand, an .at[].set of the operand's own
    elements in place (the catalogue's at_set_shifted with shift 0)."""
    return (op in ANY_LAYOUT_CHANGE
            or (op in STATIC_SLICES and tuple(operand_shape) == tuple(result_shape))
            or (op == "at_set_shifted" and static.get("shift") == 0))


def _prefix_sources(call: Call, dim: int, stop: int):
    """``(size, mesh axes)`` of dimension ``dim`` of what a slice ending at ``stop`` reads: its
    operand, and what XLA folds it into, through the steps that keep their operand's value
    (``keeps_its_value``) and into the first operand of a concatenate along ``dim`` that holds the
    slice (met on 0.6.1, seed 435230726: v0 = concatenate((x0, x1)) of x0 uint32[2] P('a'), v0[0:1]
    returned beside v0, and slices of v0.at[0:3].set(v0[0:3]) or of a device_put of x0; measured on
    0.10.2 over two devices: the HLO verifier refuses the first, as it does x0[0:1] beside x0)."""
    rank = len(np.shape(call.operands[0]))
    found = [(np.shape(call.operands[0])[dim], axes_of(call.in_specs[0], rank)[dim])]
    made, whole = (call.producers[0] if call.producers else None), np.shape(call.operands[0])
    while made is not None and made.operands and made.in_specs:
        first = np.shape(made.operands[0])
        if keeps_its_value(made.op, made.static, first, whole) and len(first) == rank:
            pass
        elif made.op == "concatenate" and len(first) == rank and made.static.get("axis", 0) % rank == dim \
                and stop <= first[dim]:
            whole = first
        else:
            break
        found.append((first[dim], axes_of(made.in_specs[0], rank)[dim]))
        made = made.producers[0] if made.producers else None
    return found


SLICING = ("slice", "strided_slice", "slice_out_of_range", "slice_empty")
RANGE_UPDATES = ("at_set_shifted", "at_add_shifted", "at_min", "at_max")
AT_UPDATES = RANGE_UPDATES + ("at_add_indices",)  # the catalogue's .at[] updates (family "at")


def made_through_same_rank_steps(call: Call, ops: Sequence[str], *, first: bool = True, depth: int = 4):
    """The step of ``ops`` that made ``call``'s first operand, directly or through up to ``depth`` - 1
    steps of the result's rank reading their first operand (a layout change, an elementwise step, a
    tril; ``first``: ``call`` itself too), as the step with ``call``'s result layout would read it: where
    the jit lays the program's result out, XLA's partitioner lays the steps before it out alike; None
    where there is none."""
    rank = len(call.result_shape or ())
    made = call if first else (call.producers[0] if call.producers else None)
    for _ in range(depth):
        if made is None or not made.operands or np.ndim(made.operands[0]) != rank and made.op not in ops:
            return None
        if made.op in ops:
            return made
        if len(made.result_shape or np.shape(made.operands[0])) != rank:
            return None
        made = made.producers[0] if made.producers else None
    return None


def pad_slices(shape: Sequence[int], widths, mode: str) -> List[Tuple[int, ...]]:
    """The shapes of the slices jnp.pad concatenates onto its operand in mode "wrap" or
    "symmetric", as JAX's _pad_wrap and _pad_symmetric_or_reflect take them: dimension by dimension,
    each slice spanning the array as padded so far (earlier dimensions grown) and one piece of the
    width along the padded one; wrap slices off the widths' remainders, symmetric mirrors chunks of
    at most the dimension's size."""
    current, slices = list(shape), []
    for i, (lo, hi) in enumerate(widths):
        n = shape[i]
        if n == 0 or (lo, hi) == (0, 0):
            continue
        pieces = [w % n for w in (lo, hi)] if mode == "wrap" else \
            [min(n, w - done) for w in (lo, hi) for done in range(0, w, n)] if mode == "symmetric" else []
        slices += [tuple(current[:i]) + (piece,) + tuple(current[i + 1:]) for piece in pieces if piece]
        current[i] += lo + hi
    return slices


def _explicit_pad_of_a_cut_dimension_it_does_not_pad(call: Call, modes: tuple) -> bool:
    """On an Explicit mesh, jnp.pad in one of ``modes`` of an operand with a non-empty dimension
    that its spec cuts and the widths leave unpadded."""
    if (call.axis_type != "Explicit" or call.op != "pad" or call.static.get("mode") not in modes
            or not call.in_specs or not call.operands):
        return False
    shape, widths = np.shape(call.operands[0]), call.static.get("widths", ())
    return any(n > 0 and tuple(w) == (0, 0) and cuts_dim(call.mesh, call.in_specs[0], i)
               for i, (n, w) in enumerate(zip(shape, widths)))


# (argmax/argmin/roll over all axes reshape to one dimension; the vocabulary's lax.reshape and lax.collapse)
RESHAPING = ("reshape", "argmax", "argmin", "roll", "lax.reshape", "lax.reshape:dimensions", "lax.collapse")


# A program's pseudo-step (the programs pass it under jit on an Explicit mesh): a step that our
# sharding-rule model rejects when typed as a JAX whose device_put inside jit keeps its operand's
# type would type it (the known deviation of test_explicit_device_put_inside_jit_types_its_result).
REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT = "a step rejected as typed before a device_put"


def _update_window_dimensions(call: Call, rank: int) -> set:
    """The dimensions on which an .at[] update's window is less than the whole side: the shifted
    updates' ``axis`` (unless ``shift`` is 0), the dimensions a static ``index`` narrows, and the
    first for an index array (``at_add_indices``)."""
    if call.op == "at_add_indices":
        return {0}
    if "axis" in call.static:
        return {call.static["axis"] % rank} if call.static.get("shift", 0) != 0 else set()
    return narrowed_dimensions(np.shape(call.operands[0]), call.static.get("index", ()))


def narrowed_dimensions(shape, index) -> set:
    """The dimensions of an operand of ``shape`` that a static ``index`` does not take whole and in
    order (an integer, a shorter, strided or reversed slice; up to an Ellipsis)."""
    narrowed = set()
    for d, part in enumerate(index_parts(index)):
        if part is Ellipsis:
            break
        if not isinstance(part, slice) or range(shape[d])[part] != range(shape[d]):
            narrowed.add(d)
    return narrowed


# What an update's result may pass through on its way to that output (unary elementwise steps of the
# catalogue and layout changes: each keeps the update's layout).
UPDATE_PASSED_OVER = ("negative", "abs", "logical_not") + ANY_LAYOUT_CHANGE


def moves_a_dimension(op: str, static: dict, rank: int) -> bool:
    """Whether ``op`` (jnp.transpose or swapaxes; False for any other) with ``static`` puts some
    dimension of a rank-``rank`` operand elsewhere."""
    if op == "transpose":
        return tuple(a % rank for a in static.get("axes", ())) != tuple(range(rank))
    if op == "swapaxes":
        return rank > 0 and static["a"] % rank != static["b"] % rank
    return False


# The catalogue's static slices (x[index]: "slice" draws a step of 1, "strided_slice" any step).
STATIC_SLICES = ("slice", "strided_slice")
GATHERS = ("take", "take_clip", "index_array", "take_along_axis")  # the catalogue's gathers (family "gather")


def _strided(index) -> bool:
    return any(isinstance(i, slice) and i.step not in (None, 1) for i in index_parts(index))


CUMULATIVE = ("cumsum", "cumprod", "cummax", "cumsum_reverse")  # the catalogue's scans (XLA reduce-windows)


def _through_layout_changes(call: Optional[Call]) -> Optional[Call]:
    """The step that made ``call``'s value, past any layout changes of it."""
    while call is not None and call.op in ANY_LAYOUT_CHANGE:
        call = call.producers[0] if call.producers else None
    return call


def _value_key(call: Call) -> tuple:
    """What decides a step's value: its operation, static arguments and operands (two steps alike
    compute one value, which XLA's simplifier makes one)."""
    return (call.op, repr(sorted(call.static.items())), tuple(call.result_shape or ()),
            tuple((np.asarray(x).dtype.str, np.shape(x), np.asarray(x).tobytes()) for x in call.operands))


def _far_out_of_range_starts(example):
    """For a vmap example of lax.dynamic_slice (``strategies.batched.VmapExample``): the
    dimensions of one example's operand with a start, in some batch element, outside [-n, n] (n the
    dimension's size); empty for another operation."""
    op, batches = example.op, example.batches
    if op.name != "dynamic_slice":
        return ()
    x, starts = np.asarray(batches[0]), batches[1:]
    return tuple(d for d, s in enumerate(starts)
                 if any(int(v) > x.shape[1 + d] or int(v) < -x.shape[1 + d] for v in np.ravel(s)))


def _clipped_take_dimension(example):
    """For a vmap example of jnp.take(mode='clip') (``strategies.batched.VmapExample``)
    with an index, in some batch element, outside the taken axis: the batched operand's taken
    dimension (1 + axis); else None."""
    op, batches, static = example.op, example.batches, example.static
    if op.name != "take_clip":
        return None
    x, idx = np.asarray(batches[0]), np.asarray(batches[1])
    taken = 1 + static["axis"] % (x.ndim - 1)  # (the axis of one example's operand, after the batch dimension)
    return taken if ((idx < 0) | (idx >= x.shape[taken])).any() else None


def pad_starts_inside_interior_padding(config) -> bool:
    """Whether a lax.pad ``config`` (low, high, interior per dimension) has, on a dimension with
    interior padding, a negative low edge that starts the result on a padding element."""
    return any(interior > 0 and low < 0 and low % (interior + 1) for low, _, interior in config)



# --- programs: layout changes (device_put, constraints) ---------------------------------------
@trigger('layout changes')
def explicit_device_put_inside_jit(call: Call) -> bool:
    """On an Explicit mesh, a program's jax.device_put step run under jit (a jit way), or a jitted
    step computed from one that changes its operand's spec (the bug leaves the device_put's result
    typed as before, so the step that needs the new type is the one that raises: met on 0.6.2 as a
    tril of a stack of a device_put to P() of a cut vector)."""
    if call.axis_type != "Explicit" or call.eager:
        return False
    if call.op == "device_put":
        return True
    seen, todo = 0, list(call.producers)
    while todo and seen < 16:
        step = todo.pop()
        seen += 1
        if step is None:
            continue
        if step.op == "device_put" and step.in_specs and \
                axes_of(step.in_specs[0], 8) != axes_of(step.static.get("spec"), 8):
            return True
        todo.extend(step.producers)
    return False


@trigger('layout changes')
def layout_change_onto_combined_axes(call: Call) -> bool:
    """A program's layout change (constraint or device_put; the program passes its spec as
    ``static["spec"]``) onto a spec that cuts one dimension over more than one mesh axis of size > 1
    (P(None, ('b', 'x')) on a (3, 2) mesh: met as an XLA abort on 0.12.0.1)."""
    spec = call.static.get("spec")
    return call.op in LAYOUT_CHANGES and spec is not None and over_combined_axes(call.mesh, spec)


def _reshape_landing(x: Tuple[int, ...], result: Tuple[int, ...]):
    """Where each dimension of ``x`` lands in a reshape to ``result`` that only adds or drops
    size-1 dimensions (a dropped one: None); None for any other reshape."""
    kept, landed = [d for d, n in enumerate(result) if n != 1], []
    if [n for n in x if n != 1] != [result[d] for d in kept]:
        return None
    for n in x:
        landed.append(kept.pop(0) if n != 1 else None)
    return (landed,)


def _dot_landing(x: Tuple[int, ...], y: Tuple[int, ...], result: Tuple[int, ...]):
    """Where each dimension of jnp.dot's ``x`` and ``y`` lands in its result (contracted: None)."""
    if not x or not y:
        return [list(range(len(result)))[len(result) - len(s):] for s in (x, y)]
    nx = len(x) - 1
    if len(y) == 1:
        return list(range(nx)) + [None], [None]
    return list(range(nx)) + [None], list(range(nx, nx + len(y) - 2)) + [None, len(result) - 1]


def _matmul_landing(x: Tuple[int, ...], y: Tuple[int, ...], result: Tuple[int, ...]):
    """Where each dimension of matmul's ``x`` and ``y`` of rank >= 2 lands in its result (batch
    dimensions aligned from the right; contracted: None); None for a vector operand."""
    if len(x) < 2 or len(y) < 2:
        return None
    r = len(result)
    return (list(range(r - len(x), r - 2)) + [r - 2, None],
            list(range(r - len(y), r - 2)) + [None, r - 1])


# The operations whose operands' dimensions land in their result otherwise than aligned from the right.
CARRIED_DIMENSIONS = {"reshape": _reshape_landing, "dot_int": _dot_landing, "matmul": _matmul_landing}


@trigger('layout changes')
def jitted_axis_moved_into_combined_axes(call: Call) -> bool:
    """Jitted, an operation whose operands align with its result (from the right: elementwise,
    broadcasting; a jnp.take's indices at its axis, its operand's other dimensions around them) where
    the output's spec or an operand's puts two or more mesh axes of size > 1 on one dimension, the
    first of which cuts another dimension of an operand: XLA's reshard of that operand aborts
    (hlo_sharding_util.cc "Check failed: sliced.has_value()"; met with jnp.greater on 0.12.0.1, x P('b')
    onto P(None, ('b', 'y')); measured: ('y', 'b') there, or 'b' already on that dimension, does not
    abort; met with jnp.take on 0.11.2 in the eleventh matrix pass, seed 2681482569: indices int32[2] P('x')
    of x int32[2, 6, 2] taken along 0 into P(None, ('x', 'y')) on an (x=2, y=3) mesh, >=0.11.2); or an
    operand's combined axes whose first cuts another dimension of the output (met with
    lax.dynamic_update_slice on 0.12.0.1 in CI, seed 2003179195: x P(('a', 'b', 'y'), None) into P('b', None,
    ('a', 'y')) on a (y=1, b=3, a=2) mesh aborts with "Could not slice dimension 0 with size 3").
    On an Explicit mesh also a reshape that only adds or drops size-1 dimensions, and a jnp.dot or
    matmul (each operand's dimensions where they land in the result, contracted ones nowhere), whose
    result JAX types in its operand's layout before the reshard (met on 0.12.0.1 in CI: x int32[6, 3]
    P(None, 'a') reshaped to (1, 1, 6, 3) into P(None, None, ('a', 'b')), seed 3575920441; jnp.dot of
    int32[6, 2, 3] P(None, None, 'a') and int32[6, 3, 2] P(None, None, 'b') into P(('b', 'a')), seed
    1960164815, both on an (a=3, b=2) mesh; measured: on an Auto mesh both compile)."""
    if call.eager or call.result_shape is None or call.mesh is None or not call.in_specs:
        return False
    rank = len(call.result_shape)
    if call.op in CARRIED_DIMENSIONS:
        landed = CARRIED_DIMENSIONS[call.op](*(np.shape(x) for x in call.operands), call.result_shape) \
            if call.axis_type == "Explicit" else None
        if landed is None:
            return False
        aligned = [{at: a for at, a in zip(where, axes_of(s, np.ndim(x))) if at is not None}
                   for where, x, s in zip(landed, call.operands, call.in_specs)]
    elif call.op in ("take", "take_clip") and len(call.operands) == 2:
        axis = call.static.get("axis", 0) % max(np.ndim(call.operands[0]), 1)
        k = np.ndim(call.operands[1])
        operand_at = [i if i < axis else i + k - 1 for i in range(np.ndim(call.operands[0])) if i != axis]
        x_axes = [a for i, a in enumerate(axes_of(call.in_specs[0], np.ndim(call.operands[0]))) if i != axis]
        aligned = [dict(zip(operand_at, x_axes)), dict(enumerate(axes_of(call.in_specs[1], k), start=axis))]
    elif any(np.ndim(x) > rank for x in call.operands):
        return False
    else:
        aligned = [dict(enumerate(axes_of(s, np.ndim(x)), start=rank - np.ndim(x)))
                   for x, s in zip(call.operands, call.in_specs)]
    targets = aligned + ([dict(enumerate(axes_of(call.out_spec, rank)))] if call.out_spec is not None else [])
    for target in targets:
        for d, axes in target.items():
            big = cut_axes(call.mesh, axes)
            if len(big) > 1 and any(big[0] in cut_axes(call.mesh, a) for operand in targets
                                    for e, a in operand.items() if e != d):
                return True
    return False


@trigger('layout changes')
def explicit_step_rejected_as_typed_before_a_device_put(call: Call) -> bool:
    """Under jit on an Explicit mesh, a program step our sharding-rule model rejects once each
    device_put inside the jit is taken to keep its operand's type (the program passes it as ``op``
    REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT)."""
    return call.op == REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT and call.axis_type == "Explicit" and not call.eager


@trigger('layout changes')
def second_layout_change_in_a_row(call: Call) -> bool:
    """A program step that changes the layout of a value whose layout a step just changed (the
    program passes it as ``op`` "layout change of a layout change")."""
    return call.op == "layout change of a layout change"


@trigger('layout changes')
def explicit_jitted_exp_relaid_out(call: Call) -> bool:
    """On an Explicit mesh, jitted, the catalogue's exp whose output's spec lays its blocks out
    otherwise than its operand's: the exp is computed in the operand's layout, fused with the copy
    that relays it out, which XLA:CPU computes an ulp off (met on 0.12.0.1, seed 2591753826:
    float32[2, 4, 2] from P('b', None, 'a') into P(None, ('a', 'b')) on a (2, 2) mesh; an Auto mesh
    relays the operand first)."""
    if call.op != "exp" or call.eager or call.axis_type != "Explicit" or not call.in_specs or call.out_spec is None:
        return False
    shape = np.shape(call.operands[0])
    return Layout(call.mesh, call.in_specs[0], shape).blocks != Layout(call.mesh, call.out_spec, shape).blocks


# --- dynamic slices ---------------------------------------------------------------------------
@trigger('dynamic_slice')
def clamped_start_with_a_cut_output(call: Call) -> bool:
    """lax.dynamic_slice whose start (negative ones counted from the end) must be clamped into
    range, with an output that is cut (on an Explicit mesh the output's type keeps its operand's
    sharding: an operand that is cut)."""
    if call.op != "dynamic_slice":
        return False
    explicit_cut = call.axis_type == "Explicit" and bool(call.in_specs) and cuts(call.mesh, call.in_specs[0])
    return start_needs_clamping(call) and (output_may_be_cut(call) or explicit_cut)


@trigger('dynamic_slice')
def cut_layout_reaching_a_clamped_dynamic_slice(call: Call) -> bool:
    """Jitted, a step computed into a layout that cuts over some mesh axis (``output_may_be_cut``)
    whose value a lax.dynamic_slice with a start needing clamping made, up to four steps back through
    joins and copies of it (stack, concatenate, broadcast_to, layout changes, unary elementwise
    steps): the partitioner cuts the slice's output too, and each shard clamps its own start (the
    dynamic_slice_clamp fold; met on 0.8.3, seed 1545607637: constrain(jnp.stack((v, v, v)), P()) of
    v = lax.dynamic_slice(x, (-1,), (2,)), x uint32[4] P('a'), into P(None, 'b') gives [3, 3] rows for
    [2, 3]; measured wrong on every release before 0.12.0)."""
    if call.eager or not output_may_be_cut(call):
        return False
    todo, seen = [(p, 1) for p in call.producers], 0
    while todo and seen < 16:
        made, depth = todo.pop()
        seen += 1
        if made is None or made.eager:
            continue
        if made.op == "dynamic_slice":
            if start_needs_clamping(made):
                return True
        elif made.op in JOINS_AND_COPIES and depth < 4:
            todo += [(p, depth + 1) for p in made.producers]
    return False


UPDATES_IN_DIM = ("lax.dynamic_update_slice_in_dim", "lax.dynamic_update_index_in_dim")


@trigger('dynamic_slice')
def moved_start_with_a_cut_operand_or_output(call: Call) -> bool:
    """lax.dynamic_update_slice (or its one-dimension forms, ``UPDATES_IN_DIM``) with a start that
    is negative (counted from the end) or must be clamped into range, with an operand or an output
    that is cut, or an operand a pad (jnp.pad, lax.pad) of a cut value computed, which XLA keeps cut
    though our model of the pad may not (XLA's partitioner places the update by the raw start:
    openxla/xla#49118; the pad met on 0.10.2, seed 2503216327: jnp.pad(x0, widths (0, 0) or (1, 0),
    mode 'edge' or 'constant') of x0 P(None, None, 'a'), then the update at start 8 or 9 of 8 or 9,
    into P(), dropped)."""
    if call.op not in ("dynamic_update_slice",) + UPDATES_IN_DIM:
        return False
    x, update, starts = call.operands[0], call.operands[1], call.operands[2:]
    if call.op in UPDATES_IN_DIM:  # (lax's one-dimension forms: one start, along ``axis``)
        axis = call.static["axis"] % np.ndim(x)
        k = 1 if call.op == "lax.dynamic_update_index_in_dim" else np.shape(update)[axis]
        start, n = int(starts[0]), np.shape(x)[axis]
        moved = start < 0 or start > n - k
    else:
        moved = any(int(s) < 0 or int(s) > n - k for s, n, k in zip(starts, np.shape(x), np.shape(update)))
    made = call.producers[0] if call.producers else None
    padded_cut = made is not None and made.op in ("pad", "lax_pad_negative") and bool(made.in_specs) \
        and cuts(made.mesh, made.in_specs[0])
    return moved and (output_may_be_cut(call) or cuts(call.mesh, call.in_specs[0]) or padded_cut)


@trigger('dynamic_slice')
def jitted_read_of_a_clamped_dynamic_slice(call: Call) -> bool:
    """Inside a jit, an .at[] update (.at[].set/.add of a shifted copy, .at[].min/.max, .at[idx].add: a
    scatter XLA turns into a read and a write of its window), a lax.dynamic_slice or a gather (jnp.take,
    integer-array indexing, take_along_axis, and a strided slice, which jnp took through gather under
    jit before 0.9.1) of a value that a lax.dynamic_slice with a start needing clamping made, sharded
    or not: XLA's algebraic simplifier folds the two reads into one dynamic-slice clamped with the
    second's size (openxla/xla#49121; measured on 0.11.0 on one device: dynamic_slice([0, 1, 2], (-1,),
    (2,)).at[::2].max([0]) jitted gives [2, 2]; on 0.10.2, jnp.take(dynamic_slice(arange(4), (-1,),
    (2,)), [0]) gives [3], on 0.8.3 its [::2] too, met there in the eleventh matrix pass, seed
    1545607637). Layout changes and unary elementwise steps between the two are passed over
    (``PASSED_OVER``; met on 0.11.0 with a constraint to P() between them, with a negation between
    them, as .at[0:2].set(v[0:2]) of the slice, negated, and as .at[[0, 0]].add([0, 1]))."""
    strided = call.op in STATIC_SLICES and bool(strided_dims(call.static.get("index", ())))
    if call.eager or (call.op not in AT_UPDATES + ("dynamic_slice",) + GATHERS and not strided) or not call.producers:
        return False
    made = call.producers[0]
    while made is not None and made.op in PASSED_OVER and made.producers:
        made = made.producers[0]
    return made is not None and made.op == "dynamic_slice" and start_needs_clamping(made)


@trigger('dynamic_slice')
def jitted_concatenate_of_a_replicated_dynamic_slice_with_itself(call: Call) -> bool:
    """Jitted, a jnp.concatenate whose operands are all one lax.dynamic_slice's value, one of them
    laid out replicated (a constraint to P(), or to size-1 axes only), into an output that cuts the
    joined dimension over some mesh axis and leaves another of two or more devices unused: the
    program never returns, its kernels spinning (dynamic_slice_join_never_returns, from 0.7.2;
    before 0.5 the partially replicated join's doubling). Measured on 0.10.2 over a (b=2, x=2) mesh:
    concatenate((wsc(ds, P()), ds)) of ds = lax.dynamic_slice(x, (i,), (5,)), x uint32[8], into
    P('b') or P('x') hangs; into P('b') over (b=2) or (y=1, b=2) meshes, with a constraint to P('x'),
    a static slice, a jnp.take or a negation in place of the dynamic_slice, with two different
    slices, or with a step between the join and the output, it returns numpy's value; a (5, 2) slice
    joined along dimension 1 hangs, along dimension 0 it does not (the trigger holds for both). Met
    on 0.11.0 in the seventh matrix pass, seed 160039396: the (b) way of a program hung for over ten
    minutes."""
    if call.eager or call.op != "concatenate" or len(call.operands) < 2 or call.mesh is None:
        return False
    made = [_through_layout_changes(p) for p in call.producers]
    if len(made) != len(call.operands) or any(m is None or m.op != "dynamic_slice" for m in made):
        return False
    if len({_value_key(m) for m in made}) != 1:
        return False
    if not any(p is not None and p.op in ANY_LAYOUT_CHANGE and s is not None and not cuts(call.mesh, s)
               for p, s in zip(call.producers, call.in_specs)):  # (one laid out replicated)
        return False
    rank = len(call.result_shape or np.shape(call.operands[0]))
    return cuts_dim(call.mesh, call.out_spec, call.static.get("axis", 0) % max(rank, 1)) and \
        partially_replicated(call.mesh, call.out_spec)


# --- static slices ----------------------------------------------------------------------------
@trigger('slicing')
def strided_slice_of_a_cut_dimension(call: Call) -> bool:
    """Jitted x[index] whose index steps by more than one (or backwards) over a dimension of x that
    is cut, or that a selection computed from operands one of which cuts that dimension (XLA may
    keep the selection's result cut there where our model of it does not say so: met on 0.10.2,
    seed 2177110864, x[::2, ::-3] of lax.select(c, x0, x0) with x0 P(None, 'a') and c P(None, None,
    'a'))."""
    if call.op != "strided_slice" or call.eager:
        return False
    made = call.producers[0] if call.producers else None
    selected_from = [s for x, s in zip(made.operands, made.in_specs) if np.ndim(x) == np.ndim(call.operands[0])] \
        if made is not None and made.op in ("select", "where") else []
    return any(cuts_dim(call.mesh, call.in_specs[0], d) or any(cuts_dim(made.mesh, s, d) for s in selected_from)
               for d in strided_dims(call.static["index"]))


@trigger('slicing')
def jitted_prefix_slice_with_its_operands_shard_shape(call: Call) -> bool:
    """Jitted, a static slice (``slice``, ``strided_slice``) that shortens, from its start and with
    step 1, a dimension its operand cuts ``k`` ways to a length whose shards are as long as the
    operand's (ceil(m / k) == ceil(n / k)): XLA's SPMD partitioner then serves the slice and another
    use of the operand by one all-gather and mixes their shapes (measured on 0.10.2, returned
    replicated under constraints beside -x or a scatter's sum: x[0:1] of x[2] over two devices,
    x[0:2] of x[3] and x[0:5] of x[6] over three, x[0:5] of x[8] over four go wrong; x[0:2] of x[4]
    over two, x[0:3] of x[6] over three, x[1:5] of x[6] over three, x[0:5] of x[8] over two are
    right; found on 0.10.2, seed 2060031791, and on 0.6.1, seed 435230726)."""
    return bool(prefix_slice_dims_with_the_operands_shard_shape(call))


@trigger('slicing')
def returned_beside_a_prefix_slice_of_it_with_its_shard_shape(call: Call) -> bool:
    """Inside a program's jit, a value that another step slices as
    ``jitted_prefix_slice_with_its_operands_shard_shape`` says (the partitioner's one all-gather
    serves the value and its slice, and the value comes back with the slice's shape; measured on
    0.10.2 over two devices: y = -x of x uint32[2] P('a'), returned with constrain(y[0:1], P()), both
    out_shardings P(), comes back as [0]; right where the slice is not constrained, or -x is
    computed twice; met on 0.6.1, seed 435230726, on an (a=2, b=4) mesh). ``read_by`` holds the steps
    reading the value, and those reading it through steps that keep it."""
    return not call.eager and any(jitted_prefix_slice_with_its_operands_shard_shape(r) for r in call.read_by)


@trigger('slicing')
def explicit_empty_slice_of_a_cut_dimension(call: Call) -> bool:
    """On an Explicit mesh, a slice with no elements of an operand cut on some dimension."""
    shape = call.result_shape
    return (call.axis_type == "Explicit" and shape is not None and 0 in shape
            and bool(call.in_specs) and cuts(call.mesh, call.in_specs[0]))


@trigger('slicing')
def explicit_static_slice_of_a_cut_operand(call: Call) -> bool:
    """On an Explicit mesh, a static slice (whose result keeps the operand's spec on a dimension it
    may no longer divide) of an operand that is cut."""
    return explicit_first_operand_cut(call, SLICING)


# --- gathers (take, take_along_axis, integer-array indexing) ----------------------------------
@trigger('gather')
def clipped_take_on_a_cut_axis(call: Call) -> bool:
    """jnp.take(mode='clip') with an index outside the taken axis, which is cut in the operand."""
    if call.op != "take_clip":
        return False
    x, idx = call.operands[0], np.asarray(call.operands[1])
    n = np.shape(x)[call.static["axis"]]
    return bool(((idx < 0) | (idx >= n)).any()) and cuts_dim(call.mesh, call.in_specs[0], call.static["axis"])


@trigger('gather')
def jitted_take_along_a_cut_axis(call: Call) -> bool:
    """jnp.take_along_axis under jit whose operand is cut along the taken axis."""
    return (not call.eager and call.op == "take_along_axis" and bool(call.in_specs)
            and cuts_dim(call.mesh, call.in_specs[0], call.static.get("axis", -1) % max(np.ndim(call.operands[0]), 1)))


@trigger('gather')
def jitted_take_along_over_combined_axes(call: Call) -> bool:
    """jnp.take_along_axis under jit whose operand or indices put two or more mesh axes of size > 1
    on one dimension."""
    if call.eager or call.op != "take_along_axis":
        return False
    return any(over_combined_axes(call.mesh, s) for s in call.in_specs[:2])


@trigger('gather')
def jitted_take_along_into_combined_axes_out_of_mesh_order(call: Call) -> bool:
    """jnp.take_along_axis under jit whose output puts two or more mesh axes of size > 1 on one
    dimension in an order other than the mesh's, and cuts another dimension too. Measured on 0.4.30
    (x int32[1, 2, 2] and indices int32[1, 8, 2] replicated, axis 1, on an (a, b, x) mesh of 2 x 2 x
    2): wrong into (None, ('x', 'b'), 'a'); right into (None, ('b', 'x'), 'a'), (None, 'x', 'a'),
    (None, ('x', 'b')) or (None, ('a', 'b', 'x')); right from 0.4.34."""
    if call.eager or call.op != "take_along_axis":
        return False
    order = {name: i for i, name in enumerate(call.mesh.axis_names)}
    dims = [cut_axes(call.mesh, axes) for axes in spec_axes(call.out_spec or ())]
    for d, axes in enumerate(dims):
        if len(axes) > 1 and [order[a] for a in axes] != sorted(order[a] for a in axes):
            if any(other for e, other in enumerate(dims) if e != d):
                return True
    return False


@trigger('gather')
def take_along_a_cut_operand_over_two_mesh_axes(call: Call) -> bool:
    """jnp.take_along_axis whose operand or indices are cut, with two or more mesh axes of size > 1
    among the layouts of its operand, its indices and (jitted) its output. Measured on 0.4.33 on an
    (a, b, x) mesh of 2 x 2 x 2, with x int32[2, 2] and indices [[0, 1], [1, 1]]: x P('a') along axis
    0 into P('x', 'b') gives [[2, 3], [2, 3]] for [[0, 3], [2, 3]] (as into P(), or eagerly, with
    the indices laid out P('x', 'b')); x P('a') along axis 1 with the indices P('a', 'x') into P('a')
    gives [[0, 0], [3, 3]] for [[0, 1], [3, 3]]; some such layouts are right (into P('b', 'x'), or
    the indices P('a', 'b')), none with one mesh axis or replicated operands; all right from 0.4.34."""
    if call.op != "take_along_axis" or len(call.in_specs) < 2:
        return False
    specs = list(call.in_specs[:2]) + ([call.out_spec] if not call.eager and call.out_spec is not None else [])
    axes = {a for spec in specs for dim in spec_axes(spec or ()) for a in cut_axes(call.mesh, dim)}
    return len(axes) >= 2 and (cuts(call.mesh, call.in_specs[0]) or cuts(call.mesh, call.in_specs[1]))


@trigger('gather')
def explicit_operand_and_indices_on_one_axis(call: Call) -> bool:
    """On an Explicit mesh, a gather whose operand and index array are sharded over a common mesh
    axis."""
    if call.axis_type != "Explicit" or len(call.operands) < 2 or len(call.in_specs) < 2:
        return False
    x_axes = {a for axes in spec_axes(call.in_specs[0] or ()) for a in axes}
    i_axes = {a for axes in spec_axes(call.in_specs[1] or ()) for a in axes}
    return bool(x_axes & i_axes)


@trigger('gather')
def jitted_gather_refining_the_cut_of_a_passed_through_dimension(call: Call) -> bool:
    """Jitted, a jnp.take (or ``x[i]`` with an index array) into an output that cuts a dimension
    its operand passes through over more mesh axes of size > 1 than the operand does, beginning with
    the operand's (XLA's SPMD partitioner aborts: spmd_partitioner_util.cc "Check failed:
    grouped_sharding.device_groups.num_groups() == reference.device_groups.num_groups()"; measured on
    0.11.2: x int32[2, 4] P(None, 'b') taken along 0 into P(None, ('b', 'x')) on a (b=2, x=2) mesh, and
    ('b', 'x') into ('b', 'x', 'y'); 'x' into ('b', 'x'), 'b' into ('x', 'b'), 'b' into 'b', the
    indices' dimension refined, and take_along_axis compile; met on 0.11.2 in the eleventh matrix pass,
    seed 2681482569)."""
    if call.eager or call.out_spec is None or call.mesh is None or call.op not in ("take", "take_clip", "index_array") \
            or len(call.operands) < 2 or len(call.in_specs) < 2:
        return False
    rank, k = np.ndim(call.operands[0]), np.ndim(call.operands[1])
    if call.op == "index_array" and k == 0:  # (a 0-d index: a dynamic_slice, no gather)
        return False
    axis = call.static.get("axis", 0) % max(rank, 1)
    out = axes_of(call.out_spec, rank - 1 + k)
    for d, axes in enumerate(axes_of(call.in_specs[0], rank)):
        mine = cut_axes(call.mesh, axes)
        theirs = cut_axes(call.mesh, out[d if d < axis else d + k - 1]) if d != axis else ()
        if mine and len(theirs) > len(mine) and theirs[:len(mine)] == mine:
            return True
    return False


@trigger('gather')
def jitted_take_of_operand_and_indices_cut_alike_into_another_axis(call: Call) -> bool:
    """jnp.take under jit, or ``x[i]`` with an index array ``i`` of one or more dimensions (the
    same gather along axis 0), whose operand (on a dimension other than the taken one) and indices
    are cut over one mesh axis, with the output cutting a dimension of the indices over another mesh
    axis of more devices (XLA's HLO verifier then rejects the partitioned gather; measured on
    0.10.2: x int32[2, 2] and i int32[4] cut over b of size 2 into P(None, 'a') with a of size 4;
    the same with a of size 2 compiles; met on 0.4.35, seed 1428177788, as x[i] of x float32[1, 4]
    P(None, 'a') and i int32[4] P('a') into P('b') on an (a=2, b=4) mesh, which 0.10.2 and
    0.12.0.1 reject alike; on 0.9.0 in the seventh matrix pass, seed 3530976916, a take with
    mode='clip' read through three negations into the program's P(None, 'a'): a step reading the take
    through steps of its rank holds it, with its own result layout)."""
    if call.eager or call.out_spec is None:
        return False
    gather = made_through_same_rank_steps(call, ("take", "take_clip", "index_array"))
    if gather is None:
        return False
    call = replace(gather, out_spec=call.out_spec)  # (read through later steps: into their result's layout)
    if len(call.operands) < 2 or len(call.in_specs) < 2:
        return False
    x, idx = call.operands[0], np.asarray(call.operands[1])
    if call.op == "index_array" and idx.ndim == 0:  # (a 0-d index: a dynamic_slice, no gather)
        return False
    rank, axis = np.ndim(x), call.static.get("axis", 0) % max(np.ndim(x), 1)
    x_axes = {a for d, axes in enumerate(axes_of(call.in_specs[0], rank)) if d != axis
              for a in cut_axes(call.mesh, axes)}
    shared = x_axes & {a for axes in axes_of(call.in_specs[1], idx.ndim) for a in cut_axes(call.mesh, axes)}
    if not shared or call.out_spec is None:
        return False
    out = axes_of(call.out_spec, rank - 1 + idx.ndim)
    small = min(call.mesh.axis_sizes[a] for a in shared)
    return any(a not in shared and call.mesh.axis_sizes[a] > small
               for d in range(axis, axis + idx.ndim) for a in cut_axes(call.mesh, out[d]))


# --- index updates (.at[]) --------------------------------------------------------------------
@trigger('at')
def scatter_beside_a_prefix_slice_with_its_operands_shard_shape(call: Call) -> bool:
    """Inside a program's jit, a value computed (up to four steps back) from an .at[] update of an
    operand that another step slices as ``jitted_prefix_slice_with_its_operands_shard_shape`` says
    (the partitioner serves both by one all-gather and the update reads the slice, its last elements
    0; measured on 0.10.2: sum(x.at[0:2].set(7)) returned beside x[0:3] of x[4] split over two
    devices, both constrained replicated, gives 16 for 19; met on 0.6.1, seed 435230726, as the sum
    of a negated x0.at[0:2].set(x0[1:3]) beside x0[:-1] of x0[3] over three devices)."""
    todo, seen = [call], 0
    while todo and seen < 16:
        made = todo.pop()
        seen += 1
        if made is None or made.eager:
            continue
        if made.op in AT_UPDATES and any(jitted_prefix_slice_with_its_operands_shard_shape(other)
                                         for other in made.beside):
            return True
        todo += list(made.producers)
    return False


@trigger('at')
def identity_update_returned_beside_a_prefix_slice_of_its_operand(call: Call) -> bool:
    """Inside a program's jit, an .at[].set of an operand's own elements in place (``keeps_its_value``:
    XLA folds it into the operand) while another step slices that operand, or a step reading it
    slices a join leading with it, as ``jitted_prefix_slice_with_its_operands_shard_shape`` says (met
    on 0.6.1, seed 435230726: x0.at[0:2].set(x0[0:2]) of x0 uint32[2] P('a') on an (a=2, b=4) mesh
    returned beside constrain(concatenate((x0, x1))[0:1], P()) comes back as [x0[0]]; measured
    >=0.5.1,<0.8.1). ``beside`` holds the steps reading the operand, each with its ``read_by``."""
    if call.eager or call.op != "at_set_shifted" or not call.operands or not keeps_its_value(
            call.op, call.static, np.shape(call.operands[0]), call.result_shape):
        return False
    return any(jitted_prefix_slice_with_its_operands_shard_shape(r)
               for other in call.beside for r in (other,) + other.read_by)


@trigger('at')
def explicit_update_sharded_unlike_its_operand(call: Call) -> bool:
    """On an Explicit mesh, an .at[] update whose update value is sharded (over any mesh axis, one
    of size 1 included: it is part of the type) unlike the updates the scatter expects: the
    operand's trailing dimensions for a range, the index array's dimensions then the operand's
    trailing ones for an index array (``at_add_indices``)."""
    if call.axis_type != "Explicit" or len(call.in_specs) < 2:
        return False
    update = axes_of(call.in_specs[-1], np.ndim(call.operands[-1]))
    if not update or not any(update):
        return False
    x = axes_of(call.in_specs[0], np.ndim(call.operands[0]))
    if call.op == "at_add_indices":
        expected = axes_of(call.in_specs[1], np.ndim(call.operands[1])) + x[1:]
    else:
        expected = x[-len(update):]
    return tuple(expected) != tuple(update)


@trigger('at')
def explicit_range_update_of_a_cut_operand(call: Call) -> bool:
    """On an Explicit mesh, an .at[] update of a static range (whose update keeps the operand's
    spec on a dimension it may not divide) of an operand that is cut."""
    return explicit_first_operand_cut(call, RANGE_UPDATES)


@trigger('at')
def explicit_at_min_or_max(call: Call) -> bool:
    """On an Explicit mesh, an .at[].min or .at[].max update (a scatter-min or scatter-max)."""
    return call.axis_type == "Explicit" and call.op in ("at_min", "at_max")


@trigger('at')
def explicit_at_set(call: Call) -> bool:
    """On an Explicit mesh, an .at[].set update of a static range (a scatter)."""
    return call.axis_type == "Explicit" and call.op == "at_set_shifted"


@trigger('at')
def explicit_at_add(call: Call) -> bool:
    """On an Explicit mesh, an .at[].add update (a scatter-add) of a static range or of indices."""
    return call.axis_type == "Explicit" and call.op in ("at_add_shifted", "at_add_indices")


@trigger('at')
def at_update_of_a_value_a_constraint_has_just_cut(call: Call) -> bool:
    """Inside a program's jit, an .at[].min, .at[].max or .at[idx].add update of a value that a
    sharding constraint has just cut over an axis of size > 1 it was not cut over before (its
    operand's spec differs: XLA folds the scatter's slices with the constraint's; a constraint that
    keeps the layout shows nothing, measured on 0.10.2; .at[idx].add met in the replay of 0.6.2's
    seed 1852810764, and measured on 0.6.2 and 0.10.2: x uint32[8, 2] constrained from P() to P('a')
    or P('b'), .at[[0]].add(u) or .at[[5]].add(u), is wrong, right on 0.12.0.1). A shifted .at[].set or
    .add (at_set_shifted, at_add_shifted) holds it where its window is one element long on a dimension the
    constraint cuts into blocks of more than one (met on 0.4.30 in the matrix of 2026-12-07:
    .at[0:1].set(v[5:6]) of v uint32[6, 2] constrained from P() to P('a'); measured on 0.10.2, x[6],
    x[8] and x[12] over 2 and 4 devices: every shift of a one-element window is wrong, every longer
    window right, as is a window of one on a dimension cut into blocks of one, or on one left whole)."""
    shifted = call.op in ("at_set_shifted", "at_add_shifted")
    if call.op not in ("at_min", "at_max", "at_add_indices") and not shifted or call.eager or not call.producers:
        return False
    made = call.producers[0]
    if made is None or made.op not in ("constraint", "layout change of a layout change"):
        return False
    target, before = made.static.get("spec"), made.in_specs[0] if made.in_specs else None
    if not (cuts(call.mesh, target) and axes_of(before, 8) != axes_of(target, 8)):
        return False
    if not shifted:
        return True
    axis, shape = call.static["axis"], np.shape(call.operands[0])
    return shape[axis] - abs(call.static["shift"]) == 1 and \
        shape[axis] > cut_ways(call.mesh, axes_of(target, len(shape))[axis])


@trigger('at')
def strided_at_update_of_a_slice_of_a_partially_replicated_operand(call: Call) -> bool:
    """Inside a jit, a strided .at[].min or .at[].max of a static slice, or a slice of one (unary
    elementwise steps and layout changes between them passed over), of an operand cut over some
    axis of size > 1 and replicated over another (``partially_replicated``; measured on 0.10.2,
    (a=2, b=4) mesh: x[0:1] of x = [0, 1] laid out P('a'), .at[::2].max of it with itself, gives
    [1]; x[0:1] of x = [0, 1, 2, 3] P('b') gives [3]; right with .at[0:1], on a mesh of 'a' alone,
    and with x cut over both axes; met on 0.6.1 with negations, a constraint to P() and a second
    slice between them)."""
    if call.op not in ("at_min", "at_max") or call.eager or not call.producers or \
            not _strided(call.static.get("index")):
        return False
    made = call.producers[0]
    while made is not None:
        if made.op in STATIC_SLICES and made.in_specs and partially_replicated(call.mesh, made.in_specs[0]):
            return True
        if made.op not in PASSED_OVER + STATIC_SLICES or not made.producers:
            return False
        made = made.producers[0]
    return False


@trigger('at')
def strided_at_update_of_a_cut_operand_by_itself(call: Call) -> bool:
    """Inside a jit, a strided .at[].min or .at[].max whose update is its operand itself (one value,
    read twice: x.at[::2].min(x), the strided dimension of size 1), of an operand cut over a mesh
    axis of size > 1 (measured on 0.4.33: x = [[0, 1]] cut P(None, 'a') over two devices, into P() or
    P(None, 'a'), gives [[0, 0]]; .at[::2].add(x) drops the second update; right with an update
    that is another value, x + 1 or a second input cut alike, and with .at[0:1]; met on 0.4.33,
    seed 582396028, on a (2, 4) mesh)."""
    if call.op not in ("at_min", "at_max") or call.eager or len(call.operands) < 2 or call.mesh is None or \
            not _strided(call.static.get("index")):
        return False
    return call.operands[1] is call.operands[0] and cuts(call.mesh, call.in_specs[0] if call.in_specs else None)


@trigger('at')
def jitted_at_update_of_a_join_along_its_cut_dimension(call: Call) -> bool:
    """Inside a jit, an .at[] update (``AT_UPDATES``) of the value a concatenate or jnp.pad has just
    made, whose window is part of a dimension the join extends while that dimension is cut in the join's
    first operand or in the update's output: XLA gathers the join whole, cuts it again for the update and
    folds the two reads into one dynamic-slice with the wrong clamp (dynamic_slice_clamp; met on 0.10.2
    in CI: .at[0:1].set(v[5:6]) of v = jnp.pad(x, ((0, 3),), mode='edge'), x uint32[3] P('a') on an
    (a=3, b=2) mesh, into P(). Measured on 0.10.2 over 1-, 2- and 3-dimensional operands on 2, 3 and
    4 devices: every pad mode and concatenate go wrong in that form on 1-dimensional operands and
    on some others (x[2, 3] concatenated along its cut dimension 0, not x[2, 2] or x[4, 2]); stack
    and roll never, nor with a negation or a constraint between the join and the update, nor with the
    window on another dimension)."""
    if call.eager or call.op not in AT_UPDATES or not call.producers or call.mesh is None:
        return False
    join = call.producers[0]
    if join is None or join.op not in ("concatenate", "pad") or not join.in_specs:
        return False
    rank = np.ndim(call.operands[0])
    if join.op == "concatenate":
        extended = {join.static.get("axis", 0) % rank}
    else:
        extended = {d for d, widths in enumerate(join.static.get("widths", ())) if tuple(widths) != (0, 0)}
    cut = {d for d in extended if cuts_dim(call.mesh, join.in_specs[0], d) or cuts_dim(call.mesh, call.out_spec, d)}
    return bool(cut & _update_window_dimensions(call, rank))


@trigger('at')
def jitted_at_update_of_a_transposed_replicated_value_into_a_cut_output(call: Call) -> bool:
    """Inside a jit, an .at[] update (``AT_UPDATES``) of a transpose (jnp.transpose or swapaxes that
    moves a dimension) of a value a sharding constraint has just replicated, whose result lands, itself
    or through ``UPDATE_PASSED_OVER`` steps, in an output that cuts: XLA cuts the transposed value again
    for the update and folds the two reads into one dynamic-slice with the wrong clamp
    (dynamic_slice_clamp; met on 0.6.2, the replay of seed 1852810764: -(jnp.swapaxes(constrain(v,
    P()), 0, -1).at[x5].add(x6)) into P('a'). Measured on 0.10.2 over two devices: constraint to P(),
    transpose, then .at[idx].add, .at[0].set, .at[0:1].min, .at[-1::2].max or a shifted set into P('a')
    goes wrong, a shifted set by -2 into P(None, 'a') too; with no transpose, or the constraint after
    it, or into P(), right)."""
    if call.eager or call.mesh is None or not cuts(call.mesh, call.out_spec):
        return False
    update = call
    while update is not None and update.op in UPDATE_PASSED_OVER and update.producers:
        update = update.producers[0]
    if update is None or update.op not in AT_UPDATES or not update.producers:
        return False
    moved = update.producers[0]
    if moved is None or not moved.operands or not moved.producers or \
            not moves_a_dimension(moved.op, moved.static, np.ndim(moved.operands[0])):
        return False
    made = moved.producers[0]
    return made is not None and made.op in ("constraint", "layout change of a layout change") and \
        not cuts(call.mesh, made.static.get("spec"))


@trigger('at')
def at_update_after_a_strided_one_on_a_constrained_value(call: Call) -> bool:
    """Inside a program's jit, an .at[].min or .at[].max into a cut output (its spec cuts) of a value
    that a strided .at[].min/.max made (layout changes between them passed over) of a constraint's
    result, whatever that constraint's layout (dynamic_slice_clamp's two-update form; measured on
    0.10.2 over two devices: constraint P() of x, .at[::2].min(u), .at[0:1:2].min(w) or .at[0:1].min(w),
    output P('a'), is wrong, with x coming in replicated or cut; right with one update alone, with no
    constraint, or with a replicated output). Also held by a layout change of that update's result
    into the cut output (the step a program's failure is localized to when such a change ends it)."""
    if call.eager or not call.producers or not cuts(call.mesh, call.out_spec):
        return False
    if call.op in ANY_LAYOUT_CHANGE:  # (a layout change into the cut output:
        call = call.producers[0]                                            # its operand is the update; met on 0.4.35)
    if call is None or call.op not in ("at_min", "at_max") or not call.producers:
        return False
    made = call.producers[0]
    while made is not None and made.op == "device_put" and made.producers:
        made = made.producers[0]
    if made is None or made.op not in ("at_min", "at_max") or not _strided(made.static.get("index")) or \
            not made.producers:
        return False
    first = made.producers[0]
    return first is not None and first.op in ("constraint", "layout change of a layout change")


@trigger('at')
def range_update_moving_its_major_cut_axis_to_another_dimension(call: Call) -> bool:
    """Jitted, an .at[] update of a static range along a dimension (the catalogue's shifted updates, which
    name it ``axis``) of the operand cut over two or more axes, into an output that cuts another
    dimension over the first (major) of them (Shardy's partitioning, from JAX 0.7.0; measured on
    0.10.2 over a (2, 2) mesh: x.at[1:].set(x[:-1]) of x[4, 2] P(('a', 'b')) into P(None, 'a') gives
    shards that do not assemble; right into P(None, 'b'), P(None, None) or P('a'), from P(('b',
    'a')), or from P('a'))."""
    if (call.eager or call.op not in RANGE_UPDATES or "axis" not in call.static or not call.in_specs
            or call.mesh is None):
        return False
    rank = len(np.shape(call.operands[0]))
    axis = call.static["axis"] % rank
    cut_in = cut_axes(call.mesh, axes_of(call.in_specs[0], rank)[axis])
    if len(cut_in) < 2:
        return False
    out = axes_of(call.out_spec, rank)
    return any(cut_axes(call.mesh, out[d])[:1] == cut_in[:1] for d in range(rank) if d != axis)


@trigger('at')
def jitted_read_of_a_range_update_moving_its_major_cut_axis(call: Call) -> bool:
    """Jitted, a step of the update's rank reading (as its first operand, directly or through up to
    three such steps: a layout change, an elementwise step, a tril) what an .at[] update of a static
    range has made, as ``range_update_moving_its_major_cut_axis_to_another_dimension`` says of the
    update with the step's output layout in place of its own (where the jit lays the program's
    result out, the partitioner lays the steps before it out alike): the partitioner leaves the
    update's shards in its operand's shape and the step reads them in the moved layout's
    (shardy_update_moving_the_major_cut_axis). Met on 0.12.0.1 replaying CI's seed 2676004163:
    x.at[:, :, 1:].set(x[:, :, :7]) of x uint32[2, 4, 8] P(None, None, ('a', 'b')) on a (b=2, y=1, a=4)
    mesh, a jnp.tril of it and a device_put, into P(None, 'a', 'y'). Measured on 0.10.2 over a (b=2,
    a=2) mesh, x.at[:, 1:].set(x[:, :3]) of x uint32[2, 4] P(None, ('a', 'b')) read into P('a'): tril,
    triu, a negation and a where fail XLA's HLO verifier, a cumsum along 1 aborts the process; into
    P(None, 'a') or P('b') every one is right."""
    if call.eager or call.out_spec is None:
        return False
    update = made_through_same_rank_steps(call, RANGE_UPDATES, first=False)
    return update is not None and range_update_moving_its_major_cut_axis_to_another_dimension(
        replace(update, out_spec=call.out_spec))


# --- joins (concatenate, stack, roll) ---------------------------------------------------------
@trigger('join')
def partially_replicated_join(call: Call) -> bool:
    """An operation built on concatenate (concatenate, stack, jnp.pad, roll) with an operand, or
    (jitted) its output, cut over part of the mesh and replicated over the rest."""
    if call.op not in JOINS:
        return False
    specs = tuple(call.in_specs) + (() if call.eager else (call.out_spec,))
    return any(partially_replicated(call.mesh, s) for s in specs)


@trigger('join')
def join_of_differently_split_operands(call: Call) -> bool:
    """A concatenate or stack whose operands are split unlike each other or, jitted, unlike the
    output."""
    if call.op not in ("concatenate", "stack"):
        return False
    specs = list(call.in_specs) + ([] if call.eager else [call.out_spec])
    return len({axes_of(s, 8) for s in specs}) > 1


@trigger('join')
def join_of_a_take_leaving_its_operand_cut_over_part_of_the_mesh(call: Call) -> bool:
    """Jitted, an operation built on concatenate of a jnp.take result whose operand, its taken
    dimension left out, is cut over part of the mesh and replicated over the rest: XLA keeps the
    take's result so laid out (partially replicated) where our model derives it replicated (met on
    0.4.37, seed 2070635138: v = jnp.take(x, i, axis=2) of x uint32[2, 2, 4] P('b', None, 'a') on an
    (a=4, b=2) mesh, jnp.concatenate((v, v)) into P() is 4 times numpy's; measured over the 34
    releases: <0.5.0)."""
    if call.op not in JOINS or call.eager:
        return False
    for made in call.producers:
        if made is None or made.op not in ("take", "take_clip") or not made.in_specs or "axis" not in made.static:
            continue
        rank = np.ndim(made.operands[0])
        axis = made.static["axis"] % rank
        kept = tuple(axes for d, axes in enumerate(axes_of(made.in_specs[0], rank)) if d != axis)
        if partially_replicated(call.mesh, kept):
            return True
    return False


@trigger('join')
def jitted_stack_cutting_its_new_dimension_after_a_cut_one(call: Call) -> bool:
    """jnp.stack under jit whose output cuts the new dimension over a mesh axis of size > 1 and the
    dimension just before it, in the output or in an operand, over another (measured on 0.4.30:
    x = [1, 2] stacked with itself on axis 1 into P('a', 'b') on a 2x2 mesh gives [[1, 1], [0, 0]];
    x P('a') stacked with a replicated y on axis 1 into P(None, 'b') on an (a=4, b=2) mesh gives
    rows read from elsewhere and zeros; P('a', None, 'b') of a stack on axis 2, the dimension before
    the new one uncut, and replicated operands into P(None, 'b') are right)."""
    if call.op != "stack" or call.eager or call.out_spec is None or call.result_shape is None:
        return False
    axis = call.static.get("axis", 0) % len(call.result_shape)
    if not axis:
        return False
    rank = len(call.result_shape)
    out = axes_of(call.out_spec, rank)
    befores = [out[axis - 1]] + [axes_of(spec, rank - 1)[axis - 1] for spec in call.in_specs]
    new = set(cut_axes(call.mesh, out[axis]))
    return bool(new) and any(cut and cut != new for cut in (set(cut_axes(call.mesh, b)) for b in befores))


@trigger('join')
def eager_pad_reshape_or_concatenate_of_a_cut_operand(call: Call) -> bool:
    """Eager jnp.pad in mode 'constant' or 'edge', lax.pad, jnp.reshape or jnp.concatenate with an
    operand that is cut (ops whose result's layout the eager dispatch reads back from the compiler's
    choice: met with jnp.pad in the first matrix pass, lax.pad and jnp.reshape in the second,
    jnp.concatenate in the third, jnp.pad in mode 'edge', which joins edge slices, in the tenth: 0.9.1,
    seed 2531645621, x int32[2, 6] P(None, 'a') padded by (0, 2) on its cut dimension on a mesh of 6;
    its script fails on the entry's releases only)."""
    padding = call.op == "pad" and call.static.get("mode") in ("constant", "edge")
    return (call.eager and (padding or call.op in ("lax_pad_negative", "reshape", "concatenate"))
            and any(cuts(call.mesh, s) for s in call.in_specs))


@trigger('join')
def explicit_roll_with_a_piece_of_size_one_dimensions_only(call: Call) -> bool:
    """On an Explicit mesh, jnp.roll along one axis of an operand that names a mesh axis, where one
    of the two slices the roll concatenates has only size-1 dimensions (from JAX 0.11.0 such a slice
    is typed P(None, ...), dropping the operand's size-1 axes, and concatenate refuses the pieces;
    measured on 0.11.0: x[1, 4] P('x') rolled by 1 or 3 along axis 1 raises, by 2 is right, and so is
    x[2, 4] P('x'))."""
    if call.axis_type != "Explicit" or call.op != "roll" or not call.in_specs or not names_an_axis(call.in_specs[0]):
        return False
    axis, shape = call.static.get("axis"), np.shape(call.operands[0])
    if not isinstance(axis, (int, np.integer)) or not shape:
        return False
    axis = int(axis) % len(shape)
    n = shape[axis]
    i = (-int(call.static["shift"])) % n if n else 0
    others_size_one = all(size == 1 for d, size in enumerate(shape) if d != axis)
    return i != 0 and others_size_one and 1 in (i, n - i)


# --- pads -------------------------------------------------------------------------------------
@trigger('pad')
def interior_padding_with_a_cut_output(call: Call) -> bool:
    """lax.pad with interior padding on some dimension, with an output that is cut."""
    if call.op != "lax_pad_negative":
        return False
    return any(interior > 0 for _, _, interior in call.static["config"]) and output_may_be_cut(call)


@trigger('pad')
def negative_edge_with_a_cut_output(call: Call) -> bool:
    """lax.pad with a negative low or high edge (elements removed) on some dimension, with an
    output that is cut."""
    if call.op != "lax_pad_negative":
        return False
    return any(lo < 0 or hi < 0 for lo, hi, _ in call.static["config"]) and output_may_be_cut(call)


@trigger('pad')
def explicit_jitted_pad_reading_a_prefix_of_a_device_put(call: Call) -> bool:
    """Jitted on an Explicit mesh, a jnp.pad whose mode reads a prefix of the leading dimension to fill
    an edge (``pad_prefix_reads``) of what a device_put inside the jit has just put on a layout that
    does not cut that dimension, while the device_put's operand cuts it ``k`` ways into shards as long
    as the prefix's (ceil(m / k) == ceil(n / k)): JAX lowers the device_put as a constraint on the
    prefix slice, which then joins the operand in its old layout, and XLA's SPMD partitioner gives the
    slice the operand's shard shape (spmd_prefix_slice_with_its_operands_shard_shape, as
    ``jitted_prefix_slice_with_its_operands_shard_shape``). Met on 0.12.0.1 in CI: the edge pad
    ((1, 0),) of jax.device_put(v, P()), v uint32[2] P('a') on an (a=2, b=4) mesh, into P(). Measured
    on 0.10.2 over 2, 4 and 8 devices: the edge pad's low edge goes wrong where n == k (x[2] over two,
    x[4] over four, x[8] over eight; not x[4] over two, x[8] over four), symmetric (x[4] over four,
    low 2 or 3), wrap (x[4] over four, high 2), reflect (x[4] over two or four, high 3) likewise;
    edge's high edge, maximum, mean, linear_ramp and constant, an Auto mesh, a reshard instead of
    the device_put, and a cut second dimension (x[3, 2] P(None, 'a') padded on it) are right)."""
    if call.eager or call.op != "pad" or call.axis_type != "Explicit" or not call.producers or call.mesh is None:
        return False
    put = call.producers[0]
    shape = np.shape(call.operands[0]) if call.operands else ()
    if put is None or put.op != "device_put" or not put.in_specs or not shape or \
            cuts_dim(call.mesh, call.in_specs[0], 0):
        return False
    low, high = np.broadcast_to(np.asarray(call.static.get("widths", 0), dtype=np.int64), (len(shape), 2))[0]
    k, n = cut_ways(call.mesh, axes_of(put.in_specs[0], len(shape))[0]), shape[0]
    return k > 1 and any(shards_as_long(m, n, k)
                         for m in pad_prefix_reads(call.static.get("mode", "constant"), int(low), int(high), n))


@trigger('pad')
def jitted_wrap_pad_moving_its_major_cut_axis(call: Call) -> bool:
    """Jitted, a jnp.pad in mode 'wrap' that pads the high edge of a dimension its operand cuts over
    two or more mesh axes (a join of the operand with a prefix slice of it), into an output that cuts
    another dimension over the first (major) of them: Shardy's partitioning fails XLA's HLO verifier,
    as for a range update (``range_update_moving_its_major_cut_axis_to_another_dimension``,
    shardy_update_moving_the_major_cut_axis). Met on 0.12.0.1 in the eleventh matrix pass (seed
    1920690675): x int32[2, 2, 8] P(None, None, ('b', 'x')) padded ((0, 0), (0, 0), (0, 1)) into P('b')
    on a (b=2, x=4) mesh; measured on 0.10.2: right with GSPMD, into P(), from (('x', 'b')), padding the
    low edge, and in modes edge, symmetric, reflect, constant and maximum."""
    if call.eager or call.op != "pad" or call.static.get("mode") != "wrap" or not call.in_specs or call.mesh is None:
        return False
    rank = len(np.shape(call.operands[0]))
    widths = np.broadcast_to(np.asarray(call.static.get("widths", 0), dtype=np.int64), (rank, 2))
    out = axes_of(call.out_spec, rank)
    for axis in range(rank):
        cut_in = cut_axes(call.mesh, axes_of(call.in_specs[0], rank)[axis])
        if widths[axis][1] > 0 and len(cut_in) > 1 and any(
                cut_axes(call.mesh, out[d])[:1] == cut_in[:1] for d in range(rank) if d != axis):
            return True
    return False


@trigger('pad')
def explicit_edge_pad_of_a_sharded_operand(call: Call) -> bool:
    """On an Explicit mesh, jnp.pad in mode 'edge' (which repeats the edges with jnp.repeat) of an
    operand sharded over any mesh axis, one of size 1 included."""
    return (call.axis_type == "Explicit" and call.op == "pad" and call.static.get("mode") == "edge"
            and bool(call.in_specs) and names_an_axis(call.in_specs[0]))


@trigger('pad')
def explicit_mirror_pad_of_a_cut_dimension_it_does_not_pad(call: Call) -> bool:
    """On an Explicit mesh, jnp.pad in mode 'symmetric' or 'reflect' of an operand with a
    non-empty dimension that its spec cuts and the widths leave unpadded (before JAX's fix
    1f556c1262 every such dimension's edges were sliced all the same)."""
    return _explicit_pad_of_a_cut_dimension_it_does_not_pad(call, ("symmetric", "reflect"))


@trigger('pad')
def explicit_edge_pad_of_a_cut_dimension_it_does_not_pad(call: Call) -> bool:
    """On an Explicit mesh, jnp.pad in mode 'edge' of an operand with a non-empty dimension that its
    spec cuts and the widths leave unpadded (JAX's _pad_edge slices the edges of every dimension,
    padded or not; 1f556c1262 skipped such dimensions for the mirror modes only)."""
    return _explicit_pad_of_a_cut_dimension_it_does_not_pad(call, ("edge",))


@trigger('pad')
def explicit_pad_with_a_piece_of_size_one_dimensions_only(call: Call) -> bool:
    """On an Explicit mesh, jnp.pad in mode "wrap" or "symmetric" of an operand that names a mesh
    axis, where a slice it concatenates (``pad_slices``) has only size-1 dimensions: the same size-1
    slice typed P(None, ...) that explicit_roll_with_a_piece_of_size_one_dimensions_only meets (met
    on 0.12.0.1 as x = [0, 1] P('b') on an (a=8, b=1) mesh padded ((3, 3),) in mode "wrap", seed
    3218358449; on 0.11.2 as x int32[6] P(('x', 'y')), both of size 1, padded ((1, 1),) in mode
    "symmetric", seed 3000927418; measured on 0.11.2: a one-element piece of [6] or [1, 6] raises in
    either mode, pieces of 2, 3 or 5 and a piece (2, 1) of [2, 6] are right)."""
    if call.axis_type != "Explicit" or call.op != "pad" or not call.in_specs or not names_an_axis(call.in_specs[0]):
        return False
    shape = np.shape(call.operands[0])
    return any(all(size == 1 for size in piece)
               for piece in pad_slices(shape, call.static.get("widths", ()), call.static.get("mode")))


@trigger('pad')
def jitted_edge_pad_of_two_dimensions_moving_a_cut_axis(call: Call) -> bool:
    """Jitted on an Auto mesh, jnp.pad in mode 'edge' or 'symmetric' (edges repeated from slices)
    padding two or more dimensions of an operand cut on two dimensions, into an output that cuts a
    dimension over a mesh axis the operand cuts another dimension over (Shardy's partitioning, from
    JAX 0.7.0; measured on 0.10.2 over a (2, 2) mesh: widths ((0, 2), (1, 0)) of x[2, 2] P('a', 'b')
    into P('b') fails XLA's HLO verifier; right in modes 'wrap', 'reflect' and 'constant', padding
    one dimension, from P(None, 'b'), and into P('a'), P() or P(None, 'a'))."""
    if (call.eager or call.axis_type != "Auto" or call.op != "pad" or call.mesh is None or not call.in_specs
            or call.static.get("mode") not in ("edge", "symmetric")):
        return False
    rank = np.ndim(call.operands[0])
    widths = np.broadcast_to(np.asarray(call.static.get("widths", 0)), (rank, 2))
    cut_in = [set(cut_axes(call.mesh, axes)) for axes in axes_of(call.in_specs[0], rank)]
    if sum(1 for lo, hi in widths if lo or hi) < 2 or sum(1 for axes in cut_in if axes) < 2:
        return False
    out = axes_of(call.out_spec, rank)
    return any(axis in cut_in[e] for d in range(rank) for axis in cut_axes(call.mesh, out[d])
               for e in range(rank) if e != d)


# --- zero-size results ------------------------------------------------------------------------
def has_no_elements(call: Call) -> bool:
    return call.result_shape is not None and 0 in call.result_shape


@trigger('zero size')
def zero_size_result_with_out_shardings(call: Call) -> bool:
    """A result with no elements, under jit with out_shardings (way b)."""
    return has_no_elements(call) and call.way is Way.JIT_SHARDINGS


@trigger('zero size')
def zero_size_result_with_a_cut_layout(call: Call) -> bool:
    """A result with no elements, of an operand that is cut or (jitted) asked to be laid out cut."""
    return has_no_elements(call) and ((bool(call.in_specs) and cuts(call.mesh, call.in_specs[0]))
                                      or (not call.eager and cuts(call.mesh, call.out_spec)))


@trigger('zero size')
def zero_size_result_constrained(call: Call) -> bool:
    """A result with no elements, constrained to a layout inside jit (way c)."""
    return has_no_elements(call) and call.way is Way.JIT_CONSTRAINTS


# --- cumulative scans -------------------------------------------------------------------------
@trigger('cumulative')
def jitted_scan_beside_a_prefix_slice_with_its_operands_shard_shape(call: Call) -> bool:
    """Inside a program's jit, a cumulative step (``CUMULATIVE``: XLA's reduce-window) along a
    dimension of an operand that another step slices along that dimension as
    ``jitted_prefix_slice_with_its_operands_shard_shape`` says: the partitioner serves the scan from
    the slice's gathered buffer, the elements past the slice read as the scan's identity, or, from
    0.10.1, it aborts the process (HandleReduceWindow: Check failed: ShapeUtil::Compatible(shard_shape,
    sharded_rw->shape())). Measured on 0.10.2 with (constrain(x[:k], P()), cumsum(x)) of x uint32[n]
    P('a'): [:2], [:3] of x[4] over four devices and [:5], [:7] of x[8] over four are wrong, [:1] of
    x[4] over four and of x[8] over eight abort, [:1]..[:4] of x[8] over four and [1:2], [3:] of x[4]
    over four are right; a cummax, cumprod and reverse cumsum alike; a slice of rows beside a cumsum
    along rows wrong, along columns right. Met on 0.10.1 in the tenth matrix pass, seed 2686075859:
    abs(constrain(x0[:1], P())) beside cumsum(x0) of x0 uint32[4] P('a') on an (a=4, b=2) mesh."""
    if call.eager or call.op not in CUMULATIVE or not call.operands:
        return False
    axis = call.static.get("axis", 0) % max(len(np.shape(call.operands[0])), 1)
    return any(axis in prefix_slice_dims_with_the_operands_shard_shape(other) for other in call.beside)


@trigger('cumulative')
def jitted_forward_shift_of_a_cumulative_value(call: Call) -> bool:
    """Inside a program's jit, ``x.at[dst].set(x[src])`` (the catalogue's at_set_shifted) whose
    destination lies after its source (a negative ``shift``) on the result of a cumulative step
    (cumsum and the other scans): XLA:CPU updates such a value in place with a forward copy that
    reads what it has already overwritten (openxla/xla#49176; measured on 0.10.2: wrong for uint32,
    int32 and float32 of lengths 4 and 8, right for length 100 and for a shift of -x)."""
    return (call.op == "at_set_shifted" and not call.eager and call.static.get("shift", 0) < 0
            and bool(call.producers) and call.producers[0] is not None and call.producers[0].op in CUMULATIVE)


# --- reshapes ---------------------------------------------------------------------------------
@trigger('reshape')
def explicit_reshape_over_a_size_one_axis(call: Call) -> bool:
    """On an Explicit mesh, a reshape of an operand sharded over a mesh axis of size 1."""
    return (call.axis_type == "Explicit" and call.op == "reshape"
            and uses_a_size_one_axis(call.mesh, call.in_specs[0]))


@trigger('reshape')
def explicit_reshape_with_a_size_one_dimension(call: Call) -> bool:
    """On an Explicit mesh, a reshape (or an operation that flattens its operand: argmax, argmin,
    roll over all axes) of a sharded operand where the operand or the result has a dimension of
    size 1."""
    if call.axis_type != "Explicit" or call.op not in RESHAPING or not call.in_specs or not call.operands:
        return False
    shapes = [np.shape(call.operands[0])] + ([call.result_shape] if call.result_shape is not None else [])
    sharded = names_an_axis(call.in_specs[0])
    return sharded and any(1 in shape for shape in shapes)


@trigger('reshape')
def explicit_reshape_of_an_unsharded_operand_neither_one_split_nor_one_merge(call: Call) -> bool:
    """On an Explicit mesh, a reshape of an operand sharded over no mesh axis that neither splits one
    dimension nor merges one group, its size-1 dimensions counted ((2, 2) -> (1, 4)): before lax's
    rule returned a fully replicated operand's sharding first (jax-ml/jax 36cd313792, 0.6.1), it
    classified such a reshape as for a sharded operand, and refused it."""
    if call.axis_type != "Explicit" or call.op != "reshape" or not call.in_specs or not call.operands:
        return False
    if call.result_shape is None or names_an_axis(call.in_specs[0]):
        return False
    return not sharding_rules.one_split_or_merge(np.shape(call.operands[0]), call.result_shape)


@trigger('reshape')
def explicit_flattening_onto_axes_ending_with_a_size_one_axis(call: Call) -> bool:
    """On an Explicit mesh, a reshape (or an operation that flattens its operand: argmax, argmin,
    roll over all axes) of an operand with a dimension sharded over more than one mesh axis, the
    last of size 1 (P('b', ('a', 'x')) with x of size 1)."""
    if call.axis_type != "Explicit" or call.op not in RESHAPING or not call.in_specs:
        return False
    return any(len(axes) > 1 and call.mesh.axis_sizes[axes[-1]] == 1 for axes in spec_axes(call.in_specs[0] or ()))


@trigger('reshape')
def explicit_flattening_over_a_size_one_axis(call: Call) -> bool:
    """On an Explicit mesh, a reshape (or an operation that flattens its operand: argmax, argmin,
    roll over all axes) of an operand sharded over a mesh axis of size 1."""
    return (call.axis_type == "Explicit" and call.op in RESHAPING and bool(call.in_specs)
            and uses_a_size_one_axis(call.mesh, call.in_specs[0]))


@trigger('reshape')
def explicit_merge_over_size_one_axes_only(example) -> bool:
    """A reshape example (``strategies.contractions.Reshape``: ``mesh``, ``axis_type``, ``kind``,
    ``dims``, ``in_spec``) on an Explicit mesh that merges dimensions of which one names a mesh axis,
    every such axis of size 1 (JAX 0.6.1-0.6.2 keep such an operand's spec as it is: measured, the
    merge of (4, 4@b, 8) into (16, 8), b of size 1, typed P(None, 'b'))."""
    if example.axis_type != "Explicit" or example.kind != "merge":
        return False
    named = [a for d in example.dims for a in axes_of(example.in_spec, max(example.dims) + 1)[d]]
    return bool(named) and all(example.mesh.axis_sizes[a] == 1 for a in named)


@trigger('reshape')
def auto_split_of_a_cut_dimension_into_a_part_the_axes_cannot_cut(example) -> bool:
    """A reshape example (``strategies.contractions.Reshape``, as below) on an Auto mesh that splits
    a dimension cut over axes of n devices in all into parts the first of which, p, is more than 1
    and not a multiple of n: XLA then lays the result out over both new dimensions, a layout JAX
    0.9.1-0.9.2 fail to name on the mesh (IndivisibleError). Measured on 0.9.1 over four devices:
    (4,) to (2, 2) and (8,) to (2, 4) fail; (8,) to (4, 2) and (4,) to (1, 4) are right."""
    if example.axis_type != "Auto" or example.kind != "split":
        return False
    axes = cut_axes(example.mesh, axes_of(example.in_spec, example.x.ndim)[example.dims[0]])
    n = int(np.prod([example.mesh.axis_sizes[a] for a in axes])) if axes else 1
    first = example.new_shape[example.new_dims[0]]
    return n > 1 and first > 1 and first % n != 0


# --- contractions and broadcasts --------------------------------------------------------------
@trigger('contraction')
def batch_and_free_dimension_returned_over_swapped_axes(example) -> bool:
    """A contraction example (``strategies.contractions.Contraction``) on an Auto mesh, jitted with
    out_shardings that cut a batch dimension of the result over a mesh axis cutting a contracted
    dimension of both operands, and a free dimension (of one operand only) over the axis that cuts
    that batch dimension in both operands, the two axes of different sizes: XLA's SPMD partitioner,
    with GSPMD and Shardy alike, returns zeros in part of the result. Measured on 0.10.2: of every
    layout of 'bkm,kb->mb' (x int32[4, 4, 4], y int32[4, 4]) with at most one axis per dimension on a
    (4, 2) mesh, only the two that swap the axes so are wrong; on a (2, 2) mesh none is."""
    if example.axis_type != "Auto":
        return False
    mesh = example.mesh
    lhs, rhs = axes_of(example.lhs_spec, len(example.lhs)), axes_of(example.rhs_spec, len(example.rhs))
    out = axes_of(example.out_spec, len(example.out))
    contracted = set().union(*(set(cut_axes(mesh, lhs[example.lhs.index(k)]))
                               & set(cut_axes(mesh, rhs[example.rhs.index(k)]))
                               for k in example.lhs if k in example.rhs and k not in example.out))
    for i, batch in enumerate(example.out):
        if batch not in example.lhs or batch not in example.rhs:
            continue
        batch_axes = (set(cut_axes(mesh, lhs[example.lhs.index(batch)]))
                      & set(cut_axes(mesh, rhs[example.rhs.index(batch)])))
        for returned_over in set(cut_axes(mesh, out[i])) & contracted:
            for j, free in enumerate(example.out):
                if free in example.lhs and free in example.rhs:
                    continue
                if any(a in batch_axes and mesh.axis_sizes[a] != mesh.axis_sizes[returned_over]
                       for a in cut_axes(mesh, out[j])):
                    return True
    return False


@trigger('contraction')
def batch_returned_over_an_axis_cutting_other_contracted_dimensions(example) -> bool:
    """A contraction example (``strategies.contractions.Contraction``) on an Auto mesh, jitted with
    out_shardings that cut a batch dimension of the result over a mesh axis that cuts a contracted
    dimension of each operand, not the same one, where both operands cut that batch dimension over
    another axis of another size: XLA's SPMD partitioner, with GSPMD and Shardy alike, returns zeros
    in part of the result. Measured on 0.10.2: 'bkl,bkl->b' of x P('b', None, 'a') and y P('b', 'a')
    into P('a') is wrong on a (4, 2) mesh and right on a (2, 2) one; right with y P('b', None, 'a')
    (the same contracted dimension: batch_laid_out_over_an_axis_both_operands_contract_over, before
    0.7.0), with the batch uncut in the operands, or returned P('b') or P()."""
    if example.axis_type != "Auto":
        return False
    mesh = example.mesh
    lhs, rhs = axes_of(example.lhs_spec, len(example.lhs)), axes_of(example.rhs_spec, len(example.rhs))
    out = axes_of(example.out_spec, len(example.out))
    contracted = [k for k in example.lhs if k in example.rhs and k not in example.out]

    def contracted_cut_by(axis, letters, axes) -> set:
        return {k for k in contracted if axis in cut_axes(mesh, axes[letters.index(k)])}
    for i, batch in enumerate(example.out):
        if batch not in example.lhs or batch not in example.rhs:
            continue
        batch_axes = (set(cut_axes(mesh, lhs[example.lhs.index(batch)]))
                      & set(cut_axes(mesh, rhs[example.rhs.index(batch)])))
        for axis in cut_axes(mesh, out[i]):
            in_lhs, in_rhs = contracted_cut_by(axis, example.lhs, lhs), contracted_cut_by(axis, example.rhs, rhs)
            if in_lhs and in_rhs and in_lhs != in_rhs and any(
                    b != axis and mesh.axis_sizes[b] != mesh.axis_sizes[axis] for b in batch_axes):
                return True
    return False


@trigger('contraction')
def jitted_einsum_returning_its_batch_and_free_dimensions_over_swapped_axes(call: Call) -> bool:
    """Jitted, the catalogue's einsum of two operands as ``batch_and_free_dimension_returned_over_swapped_axes``
    says of a contraction (met on 0.10.2 in CI, seed 3834413467: 'bij,bjk->bik' of x0 float32[4, 2, 2]
    P(('a', 'b'), None, 'y') and x1 float32[4, 2, 4] P('b', ('a', 'x', 'y')) into P(('a', 'x', 'y'), None,
    'b') on an (a=1, b=4, x=1, y=2) mesh, half the result zeros; measured on every release)."""
    if call.op != "einsum" or call.eager or call.out_spec is None or len(call.in_specs) != 2:
        return False
    inputs, out = call.static["subscripts"].split("->")
    lhs, rhs = inputs.split(",")
    return batch_and_free_dimension_returned_over_swapped_axes(SimpleNamespace(
        axis_type=call.axis_type, mesh=call.mesh, lhs=lhs, rhs=rhs, out=out,
        lhs_spec=call.in_specs[0], rhs_spec=call.in_specs[1], out_spec=call.out_spec))


@trigger('contraction')
def explicit_batch_dimensions_split_differently(call: Call) -> bool:
    """x @ y on an Explicit mesh where a batch dimension (all but the last two, aligned from the
    right) is split over some mesh axes in one operand and otherwise in the other (a size-1 axis
    counts: the Explicit type names it; met on 0.11.0 in the release matrix)."""
    if call.op != "matmul" or call.axis_type != "Explicit" or len(call.operands) != 2:
        return False
    (x, y), (xs, ys) = call.operands, call.in_specs
    xr, yr = np.ndim(x), np.ndim(y)
    if xr < 3 and yr < 3:
        return False
    xa, ya = axes_of(xs, xr), axes_of(ys, yr)
    xb, yb = xa[:max(xr - 2, 0)], ya[:max(yr - 2, 0)]
    for k in range(1, max(len(xb), len(yb)) + 1):
        one = tuple(xb[-k]) if k <= len(xb) else ()
        other = tuple(yb[-k]) if k <= len(yb) else ()
        if one != other:
            return True
    return False


@trigger('contraction')
def batch_laid_out_over_an_axis_both_operands_contract_over(example) -> bool:
    """A contraction example (``strategies.contractions.Contraction``: ``mesh``, ``axis_type``, the
    letters ``lhs``/``rhs``/``out``, their specs) on an Auto mesh, jitted with out_shardings that
    cut a batch dimension of the result over a mesh axis that cuts a contracted dimension of both
    operands, where the operands cut that batch dimension over other axes: XLA's GSPMD partitioner
    (the default before 0.7.0; still there with jax_use_shardy_partitioner off) returns zeros in
    part of the result. Measured on 0.6.2 on a (2, 4) mesh: x (4, 4) P('a', 'b') and y (4, 4)
    P('b', 'a'), 'bk,kb->b' out P('b'); right out P() or P('a'), right with the contracted
    dimension uncut, right with Shardy."""
    if example.axis_type != "Auto":
        return False
    mesh = example.mesh
    lhs, rhs = axes_of(example.lhs_spec, len(example.lhs)), axes_of(example.rhs_spec, len(example.rhs))
    out = axes_of(example.out_spec, len(example.out))
    contracted = [set(lhs[example.lhs.index(k)]) & set(rhs[example.rhs.index(k)])
                  for k in example.lhs if k in example.rhs and k not in example.out]
    for i, letter in enumerate(example.out):
        if letter not in example.lhs or letter not in example.rhs:
            continue
        operand_axes = set(cut_axes(mesh, lhs[example.lhs.index(letter)] + rhs[example.rhs.index(letter)]))
        for axis in cut_axes(mesh, out[i]):
            if operand_axes and axis not in operand_axes and any(axis in both for both in contracted):
                return True
    return False


@trigger('contraction')
def explicit_one_axis_on_two_dimensions_of_a_broadcast(call: Call) -> bool:
    """On an Explicit mesh, the operands of a broadcasting operation, aligned from the right, put
    one mesh axis on two different dimensions of the result."""
    if call.axis_type != "Explicit" or len(call.operands) < 2:
        return False
    rank = max(np.ndim(x) for x in call.operands)
    where: Dict[str, set] = {}
    for x, spec in zip(call.operands, call.in_specs):
        offset = rank - np.ndim(x)
        for d, axes in enumerate(axes_of(spec, np.ndim(x))):
            for a in axes:
                where.setdefault(a, set()).add(d + offset)
    return any(len(dims) > 1 for dims in where.values())


# --- other operations on Explicit meshes (sort, tril, where) ----------------------------------
@trigger('explicit other')
def explicit_sort_of_a_sharded_operand(call: Call) -> bool:
    """On an Explicit mesh, a sort or argsort of an operand sharded over any mesh axis."""
    return (call.axis_type == "Explicit" and call.op in ("sort", "argsort") and bool(call.in_specs)
            and names_an_axis(call.in_specs[0]))


@trigger('explicit other')
def explicit_tril_of_a_sharded_operand(call: Call) -> bool:
    """On an Explicit mesh, jnp.tril of an operand sharded over any mesh axis (it selects with a
    mask typed apart from the operand)."""
    return (call.axis_type == "Explicit" and call.op == "tril" and bool(call.in_specs)
            and names_an_axis(call.in_specs[0]))


@trigger('explicit other')
def explicit_where_of_operands_split_unlike(call: Call) -> bool:
    """On an Explicit mesh, jnp.where whose condition and cases are not all split alike."""
    if call.axis_type != "Explicit" or call.op != "where":
        return False
    return len({axes_of(s, np.ndim(x)) for s, x in zip(call.in_specs, call.operands)}) > 1


# --- constraints with UNCONSTRAINED dimensions ------------------------------------------------
@trigger('unconstrained')
def constrained_dimension_dropping_an_axis_its_input_cuts_it_over(example) -> bool:
    """A constraint with UNCONSTRAINED dimensions (``strategies.contractions.PartlyConstrained``:
    ``mesh``, ``in_spec``, ``spec``, ``constrained``) whose entry for a constrained dimension lacks
    a mesh axis of size > 1 that the input spec cuts that dimension over (a None entry lacks them
    all): GSPMD leaves that dimension as the input had it."""
    rank = max(example.constrained, default=-1) + 1  # enough dimensions to read every constrained one
    wanted, given = axes_of(example.spec, rank), axes_of(example.in_spec, rank)
    return any(set(cut_axes(example.mesh, given[d])) - set(wanted[d]) for d in example.constrained)


# --- shard_map bodies and collectives ---------------------------------------------------------
@trigger('collectives')
def loss_varying_over_the_body_axis(example) -> bool:
    """A collective differentiated in a shard_map body (suites/test_collectives.py's
    ``BodyGradientExample``: ``collective``, ``invariant``) whose result, and so the loss, varies
    over the body's axis (all_gather, psum_scatter, ppermute, all_to_all: jax.grad seeds it with a
    varying cotangent). (Another kind of example beside it, without ``invariant``: no.)"""
    return getattr(example, "invariant", None) is False


@trigger('collectives')
def named_vmap_permuting_a_negative_zero_across_devices(example) -> bool:
    """A named-vmap collective example (suites/test_collectives.py's ``NamedVmapExample``) of ppermute
    whose batch is placed along the mesh's devices and holds a -0.0: the batching rule takes the
    batch along the permutation, which XLA's SPMD partitioner moves between devices with a masked
    all-reduce, where -0.0 + 0.0 is +0.0."""
    x = np.asarray(example.x)
    return (example.collective.name == "ppermute" and example.placed and np.issubdtype(x.dtype, np.floating)
            and bool(np.any((x == 0) & np.signbit(x))))


@trigger('collectives')
def partial_permutation_under_a_named_vmap(example) -> bool:
    """A named-vmap collective example (suites/test_collectives.py's ``NamedVmapExample``:
    ``collective``, ``size``) whose collective is ppermute with fewer (source, destination) pairs
    than the batch has members (some member receives nothing)."""
    collective = example.collective
    return collective.name == "ppermute" and len(dict(collective.params)["perm"]) < example.size


@trigger('shard_map')
def checked_body_with_pmax(example) -> bool:
    """A shard_map body example (``strategies.batched.MultiAxisExample``) whose collective is pmax (the
    body runs with the replication check on)."""
    return example.collective.name == "pmax"


@trigger('shard_map')
def jitted_body_manual_over_axes_out_of_their_names_order(example) -> bool:
    """A shard_map body example (suites/test_shard_map_bodies.py's ``BodyExample``) jitted manual
    over some mesh axes only, two or more of them, which the mesh orders otherwise than their names
    sort, with an axis of size > 1 left automatic (GSPMD, the default before 0.7.0: measured on 0.6.2
    over (b=2, a=2, x=2): manual {'b', 'a'} raises "Incompatible manual sharding", {'a', 'x'} and
    {'b', 'x'} are right, as {'a', 'b'} over ('a', 'b', 'x') and {'b', 'a'} over (b=2, a=4, x=1) are;
    {'b', 'a', 'y'} over (b, a, x, y=1) raises; found in the eleventh matrix pass, seed 2055975281)."""
    mesh, manual = example.mesh, tuple(example.manual_axes)
    if example.mode != "jit, manual over some axes" or len(manual) < 2:
        return False
    in_mesh_order = [a for a in mesh.axis_names if a in manual]
    automatic = [a for a in mesh.axis_names if a not in manual]
    return in_mesh_order != sorted(in_mesh_order) and any(mesh.axis_sizes[a] > 1 for a in automatic)


@trigger('shard_map')
def untiled_all_to_all_moving_its_split_dimension(example) -> bool:
    """An all_to_all example (``strategies.manual.AllToAllExample``) that is untiled with its
    concat dimension other than its split one: the untiled all_to_all inserts its new dimension
    elsewhere than the one it consumes, and its transpose (the gradient) applies that insertion to the
    cotangent a second time. (Another kind of example beside it, without ``tiled``: no.)"""
    return getattr(example, "tiled", True) is False and example.split != example.concat


# --- vmap -------------------------------------------------------------------------------------
@trigger('vmap')
def vmapped_body_with_psum_or_pmean(example) -> bool:
    """A vmap-of-shard_map example (``strategies.batched.VmappedBody``) whose body applies psum or
    pmean."""
    return example.body.name in ("psum", "pmean")


@trigger('vmap')
def vmapped_partially_replicated_join(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of an operation built on
    concatenate with a batched operand cut over part of the mesh and replicated over the rest."""
    op, mesh, specs = example.op, example.mesh, example.specs
    return op.name in JOINS and any(partially_replicated(mesh, s) for s in specs)


@trigger('vmap')
def eager_vmapped_concatenate_of_a_cut_operand_with_uncut_ones(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of concatenate, run eagerly, whose joined
    dimension one batched operand cuts over a mesh axis of size > 1 while another operand leaves it
    whole (met on 0.9.2, seed 2064527310: x0, x1 int32[2, 2, 2] P() and x2 int32[2, 8, 2]
    P(None, ('a',)) on eight devices, axis=0: IndivisibleError)."""
    if example.op.name != "concatenate" or example.jitted:
        return False
    rank = np.ndim(example.batches[0]) - 1
    joined = 1 + example.static.get("axis", 0) % max(rank, 1)
    cut = [cuts_dim(example.mesh, spec, joined) for spec in example.specs]
    return any(cut) and not all(cut)


@trigger('vmap')
def vmapped_operands_over_combined_axes(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) with a batched operand that puts
    two or more mesh axes of size > 1 on one dimension."""
    mesh, specs = example.mesh, example.specs
    return any(over_combined_axes(mesh, s) for s in specs)


@trigger('vmap')
def vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of lax.dynamic_slice whose
    batched operand is cut on its batch dimension, with a start outside [-n, n] of its dimension's
    size n (the batched gather's clamp is lost in partitioning; measured on 0.4.30: zeros, eager and
    jitted, for such starts, whatever the slice size; starts within [-n, n] are clamped right)."""
    mesh, specs = example.mesh, example.specs
    return bool(_far_out_of_range_starts(example)) and cuts_dim(mesh, specs[0], 0)


@trigger('vmap')
def vmapped_dynamic_slice_far_out_of_range_on_a_cut_dimension(example) -> bool:
    """A vmap example of lax.dynamic_slice (as above) whose batched operand is cut on a sliced
    dimension taking one element, with a start there at or past its end or before -n (the partitioned
    gather ignores the clamp, as jnp.take(mode='clip') does on a cut axis; measured on 0.4.30 and
    0.4.37: zeros; slices of two elements over a dimension of four cut two ways are right)."""
    batches, static, mesh, specs = example.batches, example.static, example.mesh, example.specs
    if example.op.name != "dynamic_slice":
        return False
    x, sizes = np.asarray(batches[0]), static["sizes"]
    return any(sizes[d] == 1 and cuts_dim(mesh, specs[0], 1 + d)
               and any(int(v) >= x.shape[1 + d] or int(v) < -x.shape[1 + d] for v in np.ravel(batches[1 + d]))
               for d in range(len(sizes)))


@trigger('vmap')
def vmapped_clipped_take_on_a_cut_axis(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of jnp.take(mode='clip') whose
    batched operand is cut on the taken axis, with an index, in some batch element, outside that
    axis (the partitioned gather ignores the clip, as clipped_take_on_a_cut_axis's bug does unbatched;
    met on 0.4.35: vmap over x int32[2, 2] P(None, 'b') of take(x, -1, axis=0, mode='clip') gives 0
    for the second element, numpy 2)."""
    taken = _clipped_take_dimension(example)
    return taken is not None and cuts_dim(example.mesh, example.specs[0], taken)


@trigger('vmap')
def vmapped_pad_starting_inside_interior_padding(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of lax.pad whose negative low
    edge, on a dimension with interior padding, starts the result on a padding element, with the
    batched operand cut over an axis of size > 1 (spmd_pad_interior_negative_low_abort's condition,
    as the catalogue's exclusion reads it; met on 0.5.1, seed 153108493: the process aborted)."""
    op, static, mesh, specs = example.op, example.static, example.mesh, example.specs
    if op.name != "lax_pad_negative":
        return False
    return pad_starts_inside_interior_padding(static["config"]) and cuts(mesh, specs[0])


@trigger('vmap')
def vmapped_strided_slice_of_a_cut_dimension(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``), eager or jitted, of x[index]
    whose index steps by more than one (or backwards) over a dimension its batched operand cuts
    (strided_slice_of_a_cut_dimension's bug: eager vmap dispatches the batched slice as a program of
    its own; met on 0.11.0, seed 2926561557, and measured on 0.10.2: vmap of x[:-2:-3] over x
    float32[2, 8] P(None, 'a') on eight devices fails XLA's HLO verifier)."""
    op, static, mesh, specs = example.op, example.static, example.mesh, example.specs
    if op.name != "strided_slice":
        return False
    index = index_parts(static["index"])
    return any(isinstance(s, slice) and s.step not in (None, 1) and cuts_dim(mesh, specs[0], 1 + d)
               for d, s in enumerate(index))


@trigger('vmap')
def vmapped_clipped_take_over_a_cut_batch(example) -> bool:
    """A vmap example (``strategies.batched.VmapExample``) of jnp.take(mode='clip') whose
    batched operand is cut on its batch dimension, with an index, in some batch element, outside the
    taken axis (the batched gather's clip lost in partitioning, as
    vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch's clamp is; met on 0.4.31: vmap over x
    int32[2, 2] P('b') of take(x, -1, axis=0, mode='clip') gives 0 for the second element, numpy 2)."""
    return _clipped_take_dimension(example) is not None and cuts_dim(example.mesh, example.specs[0], 0)


# --- autodiff ---------------------------------------------------------------------------------
@trigger('autodiff')
def transposed_jit_with_a_cut_output(example) -> bool:
    """An autodiff example (``transform`` of a function jitted with ``out_spec``) that transposes
    the jit (grad, value_and_grad, vjp) whose output spec cuts over a mesh axis of size > 1: the
    cotangent reaches the transposed jit laid out otherwise (replicated, from the sum a gradient
    takes; first met with the input specs replicating that axis, then on 0.4.35 with them cutting
    it too)."""
    axes = lambda spec: {a for dim in spec_axes(spec or ()) for a in dim}
    return example.transform in ("grad", "value_and_grad", "vjp") and \
        any(example.mesh.axis_sizes[a] > 1 for a in axes(example.out_spec))


# --- pmap -------------------------------------------------------------------------------------
@trigger('pmap')
def pmap_axis_smaller_than_its_devices(example) -> bool:
    """A pmap ``devices=`` example (suites/test_pmap.py's ``DevicesGiven``: ``given``, ``axis_size``)
    whose mapped axis is smaller than the number of devices given (measured on 0.10.2: every such
    pair is accepted, every larger axis refused)."""
    return example.axis_size < example.given


# --- jax.random -------------------------------------------------------------------------------
@trigger('random')
def non_partitionable_draw_into_a_partially_replicated_layout(example) -> bool:
    """A jax.random draw (suites/test_random.py's ``Draw``: ``partitionable``, ``mesh``, ``out_spec``,
    ``key_spec``) with jax_threefry_partitionable off, whose output or keys are cut over a mesh axis
    of size > 1 (the original Threefry concatenates its two halves, a value the partitioner may
    leave partially replicated: first met with the output or keys so laid out, then on 0.4.31 with
    the output P('a', 'b') on a 2x2 mesh, every axis used, its bits doubled)."""
    return not example.partitionable and (cuts(example.mesh, example.out_spec) or cuts(example.mesh, example.key_spec))


# --- ahead-of-time compilation ----------------------------------------------------------------
@trigger('aot')
def compiled_call_on_other_devices_with_other_blocks(example) -> bool:
    """An example of suites/test_aot.py's argument checks (``OtherArgumentExample``: ``shape``,
    ``mesh``, ``spec``, ``other``, ``other_mesh``) whose argument is laid out with the same spec on
    other devices, some device holding another block than compiled for (0.4.30 and 0.4.31 move it
    to the compiled devices instead of refusing it)."""
    return (example.other == "the same spec on other devices"
            and Layout(example.other_mesh, example.spec, example.shape).blocks
            != Layout(example.mesh, example.spec, example.shape).blocks)


# --- multihost_utils on one process -------------------------------------------------------------
@trigger('multihost utils')
def untiled_gather_on_one_process(example) -> bool:
    """A process_allgather example of suites/test_multihost_utils.py (``AllgatherExample``:
    ``tree``, ``tiled``, ``kind``) with tiled=False: one process returned each leaf unstacked before
    0.5.0 (jax-ml/jax#25783)."""
    return not example.tiled


@trigger('multihost utils')
def tiled_gather_of_a_scalar_leaf(example) -> bool:
    """A process_allgather example (as above) with tiled=True and a rank-0 leaf, which one process
    returns unstacked where the docstring and several processes stack a scalar."""
    return example.tiled and any(not leaf["shape"] for leaf in example.tree["leaves"])


# --- control flow and checkpointing -----------------------------------------------------------
@trigger('control flow')
def auto_branches_constrained_to_different_layouts(example) -> bool:
    """A switch/cond example (suites/test_control_flow.py's ``BranchExample``: ``axis_type``,
    ``branch_specs``) on an Auto mesh whose branches ask for different output layouts (one of them
    none), which XLA's verifier refuses after sharding propagation."""
    return example.axis_type == "Auto" and len(set(example.branch_specs)) > 1


@trigger('control flow')
def checkpoint_policy_saving_the_named_value(example) -> bool:
    """A checkpoint example (suites/test_control_flow.py's ``RematExample``: ``policy``, ``x``,
    ``w``, ``inner_spec``) whose policy, by the model, saves the value named by checkpoint_name."""
    from conformance.model import remat
    kind, names = example.policy
    m, k = example.x.shape
    program = remat.sin_dot_program(m, k, example.w.shape[1], name="s", constrained=example.inner_spec is not None)
    return any(r.source == "named" for r in remat.saved_residuals(program, remat.Policy(kind, frozenset(names))))


@trigger('control flow')
def checkpoint_policy_saving_an_intermediate(example) -> bool:
    """A checkpoint example (``RematExample``, as above) whose policy, by the model, saves a value
    the function computes (a dot output, a named value, a cos), not only its arguments."""
    from conformance.model import remat
    kind, names = example.policy
    m, k = example.x.shape
    program = remat.sin_dot_program(m, k, example.w.shape[1], name="s", constrained=example.inner_spec is not None)
    return any(r.source != "argument" for r in remat.saved_residuals(program, remat.Policy(kind, frozenset(names))))


@trigger('control flow')
def stack_checkpointed_to_save_only_the_named_value(example) -> bool:
    """A scanned-stack example (suites/test_training.py's ``StackExample``: ``policy``) whose layers
    are checkpointed with save_only_these_names, which saves the value they name."""
    return example.policy == "save_only_these_names"


# --- programs in contexts (suites/test_program_contexts.py) -----------------------------------
@trigger('program contexts')
def explicit_vmapped_device_put_onto_a_cut(call: Call) -> bool:
    """Under vmap on an Explicit mesh, a program's jax.device_put step (the contexts property passes
    it as op "vmap: device_put", its spec as ``static["spec"]``) onto a spec that cuts a dimension
    over an axis of size > 1: device_put's batching rule hands the unbatched value's sharding to the
    batched value, whose leading (batch) dimension it then names (met on 0.10.2: P(None, 'a') of a
    [2, 4] value under vmap of a batch of one cut [1, 2, 4] over 'a' at its 2)."""
    spec = call.static.get("spec")
    return (call.op == "vmap: device_put" and call.axis_type == "Explicit" and spec is not None
            and any(cut_axes(call.mesh, axes) for axes in spec_axes(spec)))


def _vmapped_dynamic_slice_step(call: Call):
    """(operand, starts, sizes) of a contexts property's "vmap: dynamic_slice" candidate, or None."""
    if call.op != "vmap: dynamic_slice" or not call.in_specs or call.mesh is None:
        return None
    return np.asarray(call.operands[0]), call.operands[1:], call.static.get("sizes", ())


@trigger('program contexts')
def vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch_step(call: Call) -> bool:
    """Under vmap, a program's lax.dynamic_slice (the contexts property passes it as op "vmap:
    dynamic_slice", its operand and starts as operands, the batched operand's spec first) whose batch
    is cut over a mesh axis of size > 1, with a start outside [-n, n] of its dimension's size n: the
    batched gather's clamp is lost in partitioning, as ``vmapped_dynamic_slice_far_out_of_range_over_
    a_cut_batch`` says (met on 0.4.30 by the contexts property, seed 3697235639: zeros)."""
    found = _vmapped_dynamic_slice_step(call)
    if found is None:
        return False
    x, starts, _ = found
    return any(int(s) > n or int(s) < -n for s, n in zip(starts, x.shape)) and cuts_dim(call.mesh, call.in_specs[0], 0)


@trigger('program contexts')
def vmapped_dynamic_slice_out_of_range_of_a_cut_operand_step(call: Call) -> bool:
    """The same candidate whose operand is cut on one of its own dimensions, with a start outside
    [-n, n] of any dimension, or, on a cut dimension sliced to one element, at or past its end
    (measured on 0.4.30-0.4.37 over every start in [-5, 5]^3 of v uint32[2, 2, 4] cut P(None, None,
    'a') per example, one-element slices: zeros exactly there; right from 0.4.38; met on 0.4.30, seed
    3697235639, shrunk)."""
    found = _vmapped_dynamic_slice_step(call)
    if found is None:
        return False
    x, starts, sizes = found
    cut = [d for d in range(x.ndim) if cuts_dim(call.mesh, call.in_specs[0], 1 + d)]
    far = any(int(s) > n or int(s) < -n for s, n in zip(starts, x.shape))
    past = any(sizes[d] == 1 and (int(starts[d]) >= x.shape[d] or int(starts[d]) < -x.shape[d]) for d in cut)
    return bool(cut) and far or past


# --- model programs ---------------------------------------------------------------------------
@trigger('model programs')
def bfloat16_operands_summed_in_float32(example) -> bool:
    """A model-program example (suites/test_model_programs.py's ``ModelExample``: ``dtype``) in
    bfloat16: its dots take bfloat16 operands and sum in float32 (``preferred_element_type``), the
    transformer block's logits dot ('bsh,vh->bsv') among them, a form XLA:CPU 0.7.1-0.8.0 keeps in
    bfloat16 and then cannot run (measured: the float32 program of the same block runs)."""
    return getattr(example, "dtype", None) == "bfloat16"


# --- device_put of a host value on every process (multi-controller runs) --------------------------
def _float_parts(x: np.ndarray) -> List[np.ndarray]:
    """The floating parts of ``x`` as numpy arrays (real and imaginary for complex; none for others)."""
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return [x.real, x.imag]
    return [x] if np.issubdtype(x.dtype, np.floating) or x.dtype.name == "bfloat16" else []


@trigger('device_put')
def host_value_holding_a_nan(example) -> bool:
    """A device_put example (suites/test_device_put.py's ``HostValuePut``: ``x``) whose host value
    holds a NaN (device_put's check that every process passes the same value compares with
    NaN != NaN)."""
    return any(bool(np.isnan(part.astype(np.float64)).any()) for part in _float_parts(example.x))


@trigger('device_put')
def host_value_holding_a_flushed_subnormal(example) -> bool:
    """A device_put example (``HostValuePut``: ``x``) whose host value holds a subnormal of float32,
    float64 or bfloat16 (or such a complex part), which device_put's check flushes to zero when it
    broadcasts the value through a computation on XLA:CPU (a float16 subnormal is a normal float32
    there, and survives)."""
    tiny = lambda dtype: float(ml_dtypes.finfo(dtype).tiny)  # (strategies.arrays.tiny_of, a package above)
    return any(bool(((part != 0) & (np.abs(part.astype(np.float64)) < tiny(part.dtype))).any())
               for part in _float_parts(example.x) if part.dtype != np.float16)


@trigger('programs')
def eager_device_put_of_a_computed_value(call: Call) -> bool:
    """A program's jax.device_put step run eagerly whose operand another step computed (not a
    program input): in a multi-controller run, an eager result laid out by a GSPMDSharding, which
    device_put's cross-process reshard took for a NamedSharding (0.4.38)."""
    return call.eager and call.op == "device_put" and bool(call.producers) and call.producers[0] is not None


# --- the vocabulary (test_vocabulary_never_changes_values) ---------------------------------------
CONSTANT_OF_A_REAL_OPERAND = ("jnp.imag", "jnp.isreal", "jnp.iscomplex")  # zeros, True, False of a real x


@trigger('vocabulary')
def eager_auto_result_ignoring_its_operands_values(call: Call) -> bool:
    """Eager, on an Auto mesh, a function whose result does not depend on its operand's values
    (jnp.imag, jnp.isreal or jnp.iscomplex of a real operand; lax.integer_pow(x, 0)): jit drops the
    unused input and its layout with it (jax-ml/jax#26040)."""
    if not call.eager or call.axis_type != "Auto":
        return False
    if call.op in CONSTANT_OF_A_REAL_OPERAND:
        return np.asarray(call.operands[0]).dtype.kind != "c"
    return call.op == "lax.integer_pow" and call.static.get("y") == 0


@trigger('vocabulary')
def eager_auto_erf_of_a_cut_operand(call: Call) -> bool:
    """Eager lax.erf, on an Auto mesh, of an operand cut over an axis of size > 1: its result comes
    back replicated."""
    return call.eager and call.axis_type == "Auto" and call.op == "lax.erf" and cuts(call.mesh, call.in_specs[0])


@trigger('vocabulary')
def mulhi_over_several_devices(call: Call) -> bool:
    """lax.mulhi in a program over a mesh of more than one device (any layout, any way): the
    partitioned program does not compile."""
    return call.op == "lax.mulhi" and call.mesh is not None and len(call.mesh.device_ids) > 1


WINDOWED_PRODUCTS = ("jnp.convolve", "jnp.correlate", "jnp.polymul")  # (one 1-D lax.conv_general_dilated each)


@trigger('vocabulary')
def convolution_cut_over_part_of_the_mesh(call: Call) -> bool:
    """jnp.convolve, jnp.correlate or jnp.polymul (``WINDOWED_PRODUCTS``) with an operand, or under jit
    its output, cut over some mesh axis and replicated over another of size > 1: XLA may split the
    convolution's window over the cut axis and sum the partial results over every device, not over
    that axis's groups (spmd_convolution_window_sum_over_all_devices; which lengths and modes it
    splits is XLA's choice, so the symptom's where, every wrong value a whole multiple of the right
    one, is what narrows it)."""
    if call.op not in WINDOWED_PRODUCTS or call.mesh is None:
        return False
    specs = list(call.in_specs) + ([] if call.eager else [call.out_spec])
    return any(partially_replicated(call.mesh, spec) for spec in specs)


BITWISE_REDUCTIONS = ("lax.reduce_and:int32", "lax.reduce_or:int32", "lax.reduce_xor", "lax.reduce_xor:bool")


@trigger('vocabulary')
def bitwise_reduction_over_a_cut_dimension(call: Call) -> bool:
    """lax.reduce_and or reduce_or of an integer operand, or reduce_xor (``BITWISE_REDUCTIONS``),
    reducing a dimension its operand's layout cuts: the partitioner's all-reduce of a bitwise
    computation, which XLA:CPU cannot compile (bool and/or compute: it maps them to min/max)."""
    if call.op not in BITWISE_REDUCTIONS or not call.in_specs or call.mesh is None:
        return False
    axes = axes_of(call.in_specs[0], np.ndim(call.operands[0]))
    return any(cut_axes(call.mesh, axes[d]) for d in call.static.get("axis", ()))


SELECTING_ELEMENTWISE = ("lax.igamma", "lax.igammac", "lax.betainc", "jnp.ldexp")  # (a select in their implementation)


@trigger('vocabulary')
def explicit_elementwise_of_operands_sharded_unlike_each_other(call: Call) -> bool:
    """On an Explicit mesh, lax.igamma, lax.igammac, lax.betainc or jnp.ldexp whose operands,
    aligned from the right, are not all sharded alike: their implementations select between values
    computed from differently sharded operands (jax-ml/jax#37853's select rule)."""
    if call.axis_type != "Explicit" or call.op not in SELECTING_ELEMENTWISE:
        return False
    rank = max(np.ndim(x) for x in call.operands)
    aligned = {(((),) * (rank - np.ndim(x)) + tuple(axes_of(spec, np.ndim(x)))) for x, spec in
               zip(call.operands, call.in_specs)}
    return len(aligned) > 1
