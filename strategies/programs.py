"""Generated programs: short chains of catalogue operations over a few live arrays, with a layout
change after any step, drawn together with numpy's value of every step (each step is well typed by
construction, and the oracle comes with the program).

The types and their vocabulary are in ``conformance/model/program.py``.

Values are uint32 (and bool from comparisons, int32 from argmax/argsort, and int32 index and start
inputs): unsigned arithmetic wraps modulo 2**32 by definition, in every order of evaluation, so
every value is exact whatever the partitioner does. Not int32: XLA treats signed integer overflow as
undefined, free to simplify ``abs(x * x)`` to ``x * x`` (openxla/xla#41784; the soak met it). The
catalogue's floating-point entries, which need a tolerance per operation, stay in the
single-operation suite. Each catalogue
entry a program can use has a ``Feed`` here: which values it can take, and how its other operands
(indices, updates, starts: new inputs of the program) and static arguments are drawn.

Shrinking goes towards one step, the first entry of ``FEEDS`` (negation), the latest value as the
operand, no layout change, no donation, a first input of shape ``(2,)`` cut over the first axis
of a mesh of all the devices (``cutting_meshes``, ``sharding_specs``: ``(2, 4)`` on 8 devices),
and replicated specs for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from hypothesis import strategies as st

import strategies.ops.inputs as i
from conformance.model.layout import MeshModel, Spec
from conformance.model.program import LAYOUT_CHANGES, Program, Step
from strategies.meshes import cutting_meshes
from strategies.ops import BY_NAME
from strategies.specs import dividing_specs, sharding_specs
from strategies.reuse import sampled_from

VALUES = "uint32"  # the dtype programs compute in (indices and starts are int32 inputs)
INT, BOOL = np.dtype(VALUES), np.dtype(np.bool_)
MAX_RANK, GROWS_BELOW = 4, 256  # no value above rank 4; ops that grow a value take it below 256 elements


# --- how a program feeds each catalogue entry ---------------------------------------------------
class Builder:
    """The program being drawn: its values so far (latest first when offered as operands), its
    inputs and their specs."""

    def __init__(self, draw, mesh: MeshModel):
        self.draw, self.mesh = draw, mesh
        self.values: Dict[str, np.ndarray] = {}
        self.inputs: List[str] = []
        self.in_specs: List[Spec] = []

    def add_input(self, array: np.ndarray, *, cut: bool = False) -> str:
        """A new input holding ``array``, with a drawn spec that divides its shape (``cut``: mostly
        one that cuts it over an axis of size > 1, ``sharding_specs``)."""
        name = f"x{len(self.inputs)}"
        self.values[name] = np.asarray(array)
        self.inputs.append(name)
        specs = sharding_specs if cut else dividing_specs
        self.in_specs.append(self.draw(specs(self.mesh, np.shape(array))))
        return name

    def new_input(self, dtype: str, shape, kind: str = "any", *, cut: bool = False) -> str:
        return self.add_input(self.draw(i.values(dtype, tuple(shape), kind)), cut=cut)

    def latest_first(self, accept: Callable[[np.ndarray], bool]) -> List[str]:
        return [name for name in reversed(list(self.values)) if accept(self.values[name])]

    def pick(self, accept: Callable[[np.ndarray], bool], make: Callable[[], str]) -> str:
        """A value ``accept`` takes (the latest first), or a new input from ``make()``."""
        found = self.latest_first(accept)
        choice = self.draw(sampled_from(found + [None])) if found else None
        return choice if choice is not None else make()


@dataclass(frozen=True)
class Feed:
    """How a program feeds one catalogue entry: the dtype and ranks of the value it takes as its
    first operand (``grows``: only values below ``GROWS_BELOW`` elements and ``MAX_RANK``), and
    ``build(builder, x) -> (operand names, static)``, which draws the other operands and the
    static arguments."""

    dtype: np.dtype
    build: Callable
    min_rank: int = 0
    max_rank: int = MAX_RANK
    grows: bool = False

    def takes(self, x: np.ndarray) -> bool:
        return (x.dtype == self.dtype and self.min_rank <= x.ndim <= self.max_rank
                and (not self.grows or (x.size < GROWS_BELOW and x.ndim < MAX_RANK)))


def unary(statics=None, *, dtype=INT, min_rank=0, max_rank=MAX_RANK, grows=False) -> Feed:
    """One operand; static arguments from ``statics(shape)`` (a strategy of a dict)."""
    def build(b: Builder, x: str):
        return (x,), (b.draw(statics(b.values[x].shape)) if statics else {})
    return Feed(dtype, build, min_rank, max_rank, grows)


def broadcasts_to(shape, dtype: np.dtype = INT) -> Callable[[np.ndarray], bool]:
    """Whether a value is of ``dtype`` and broadcasts to ``shape``."""
    def accept(y: np.ndarray) -> bool:
        try:
            return y.dtype == dtype and np.broadcast_shapes(y.shape, shape) == tuple(shape)
        except ValueError:
            return False
    return accept


def second_operand(b: Builder, shape, dtype: str = "uint32") -> str:
    """A value that broadcasts to ``shape`` (the same one included), or a new input of a shape
    that does."""
    return b.pick(broadcasts_to(shape, np.dtype(dtype)),
                  lambda: b.new_input(dtype, b.draw(i.broadcasting_to(tuple(shape)))))


def binary() -> Feed:
    """``x`` and a second operand that broadcasts to it."""
    def build(b: Builder, x: str):
        return (x, second_operand(b, b.values[x].shape)), {}
    return Feed(INT, build)


def reduction(*, dtype=INT, single_axis=False, keepdims=True) -> Feed:
    def statics(shape):
        axis = st.one_of(st.none(), i.one_axis(len(shape))) if single_axis and shape else i.axes_of(len(shape))
        return st.fixed_dictionaries({"axis": axis, **({"keepdims": st.booleans()} if keepdims else {})})
    return unary(statics, dtype=dtype)


def scan(*, negative_axis=True) -> Feed:
    def statics(shape):
        return st.fixed_dictionaries({"axis": st.integers(-len(shape) if negative_axis else 0, len(shape) - 1)})
    return unary(statics, min_rank=1)


def joining(*, stack: bool) -> Feed:
    """``x`` and one or two more operands of its shape (``stack``) or of its shape but along
    ``axis`` (concatenate): ``x`` itself, a value that fits, or a new input."""
    def build(b: Builder, x: str):
        shape = b.values[x].shape
        axis = b.draw(st.integers(0, len(shape) if stack else len(shape) - 1))

        def fits(y: np.ndarray) -> bool:
            return y.dtype == INT and y.ndim == len(shape) and all(
                n == m for d, (n, m) in enumerate(zip(y.shape, shape)) if stack or d != axis)

        def new() -> str:
            piece = list(shape)
            if not stack:
                piece[axis] = b.draw(sampled_from(i.SIDES))
            return b.new_input(VALUES, piece)
        others = [b.pick(fits, new) for _ in range(b.draw(st.integers(1, 2)))]
        return (x, *others), {"axis": axis}
    return Feed(INT, build, min_rank=0 if stack else 1, grows=True)


def squeezable() -> Feed:
    def build(b: Builder, x: str):
        ones = [d for d, n in enumerate(b.values[x].shape) if n == 1]
        return (x,), {"axis": tuple(b.draw(st.lists(sampled_from(ones), min_size=1, unique=True)))}
    return _requiring(Feed(INT, build, min_rank=1), lambda x: 1 in x.shape)


def _requiring(feed: Feed, condition: Callable[[np.ndarray], bool]) -> Feed:
    """``feed`` restricted to values that also meet ``condition``."""
    class Restricted(Feed):
        def takes(self, x):
            return Feed.takes(self, x) and condition(x)
    return Restricted(feed.dtype, feed.build, feed.min_rank, feed.max_rank, feed.grows)


def with_indices(make_index: Callable, *, axis: bool) -> Feed:
    """``x`` and a new int32 index input from ``make_index(shape, axis)`` (a strategy of an
    array); ``axis`` drawn when the entry takes one."""
    def build(b: Builder, x: str):
        shape = b.values[x].shape
        d = b.draw(st.integers(0, len(shape) - 1))
        idx = b.add_input(b.draw(make_index(shape, d)))
        return (x, idx), ({"axis": d} if axis else {})
    return Feed(INT, build, min_rank=1)


def take_index(clip: bool):
    def make(shape, axis):
        n = shape[axis]
        low, high = (-n - 3, 2 * n + 2) if clip else (0, n - 1)
        return i.index_arrays(n, low=low, high=high)
    return make


def fancy_index(shape, axis):
    return i.index_arrays(shape[0], low=-shape[0], high=shape[0] - 1)


def along_axis_index(shape, axis):
    def make(draw):
        idx_shape = list(shape)
        idx_shape[axis] = draw(sampled_from(i.SIDES))
        return draw(i.hnp.arrays(np.int32, tuple(idx_shape), elements=st.integers(0, shape[axis] - 1)))
    return i.drawn(make)


def scatter_add() -> Feed:
    """``x``, indices into its first dimension (repeats add up) and updates: new inputs."""
    def build(b: Builder, x: str):
        shape = b.values[x].shape
        count = b.draw(sampled_from(i.SIDES))
        idx = b.add_input(b.draw(i.hnp.arrays(np.int32, (count,), elements=st.integers(0, shape[0] - 1))))
        return (x, idx, b.new_input(VALUES, (count,) + shape[1:])), {}
    return Feed(INT, build, min_rank=1)


def at_range() -> Feed:
    """``x``, a strided static range of it, and updates of that range's shape (a value that fits,
    or a new input)."""
    def build(b: Builder, x: str):
        index = b.draw(i.index_statics("strided")(b.values[x].shape))["index"]
        part = b.values[x][index].shape
        u = b.pick(lambda y: y.dtype == INT and y.shape == part, lambda: b.new_input(VALUES, part))
        return (x, u), {"index": index}
    return Feed(INT, build, min_rank=1)


def at_shifted() -> Feed:
    def statics(shape):
        def build(draw):
            axis = draw(st.integers(0, len(shape) - 1))
            return {"axis": axis, "shift": draw(st.integers(-(shape[axis] - 1), shape[axis] - 1))}
        return i.drawn(build)
    return unary(statics, min_rank=1)


def starts_for(b: Builder, shape) -> Tuple[str, ...]:
    """One new int32 scalar input per dimension, up to 3 past either end (clamped at run time)."""
    return tuple(b.add_input(np.int32(b.draw(st.integers(-n - 3, n + 3)))) for n in shape)


def dynamic_slice() -> Feed:
    def build(b: Builder, x: str):
        shape = b.values[x].shape
        sizes = tuple(b.draw(st.integers(1, n)) for n in shape)
        return (x, *starts_for(b, shape)), {"sizes": sizes}
    return Feed(INT, build, min_rank=1)


def dynamic_update_slice() -> Feed:
    def build(b: Builder, x: str):
        shape = b.values[x].shape

        def fits(y):
            return y.dtype == INT and y.ndim == len(shape) and all(m <= n for m, n in zip(y.shape, shape))
        update = b.pick(fits, lambda: b.new_input(VALUES, tuple(b.draw(st.integers(1, n)) for n in shape)))
        return (x, update, *starts_for(b, shape)), {}
    return Feed(INT, build, min_rank=1)


def contraction() -> Feed:
    """``x`` of rank 1..3 and ``y`` of shape ``(k,)`` or ``(k, n)``, ``k`` the last side of ``x``
    (a value of that shape, or a new input)."""
    def build(b: Builder, x: str):
        k = b.values[x].shape[-1]

        def fits(y):
            return y.dtype == INT and y.ndim in (1, 2) and y.shape[0] == k
        shape = b.draw(sampled_from([(k,), (k, b.draw(sampled_from(i.SIDES)))]))
        return (x, b.pick(fits, lambda: b.new_input(VALUES, shape))), {}
    return Feed(INT, build, min_rank=1, max_rank=3)


def selection(*, same_shapes: bool) -> Feed:
    """A bool condition and a second uint32 operand, both broadcasting to ``x`` (of its shape when
    ``same_shapes``); values that fit, or new inputs."""
    def build(b: Builder, x: str):
        shape = b.values[x].shape
        if same_shapes:
            c = b.pick(lambda y: y.dtype == BOOL and y.shape == shape, lambda: b.new_input("bool", shape))
            y = b.pick(lambda y: y.dtype == INT and y.shape == shape, lambda: b.new_input(VALUES, shape))
        else:
            c, y = second_operand(b, shape, "bool"), second_operand(b, shape)
        return (c, x, y), {}
    return Feed(INT, build)


# Every catalogue entry a program can use, simplest first (what shrinking goes towards).
FEEDS: Dict[str, Feed] = {
    "negative": unary(),
    "abs": unary(),
    "add": binary(),
    "multiply": binary(),
    "maximum": binary(),
    "bitwise_xor": binary(),
    "greater": binary(),
    "logical_not": unary(dtype=BOOL),
    "sum_int": reduction(),
    "max": reduction(),
    "min_int": reduction(),
    "argmax": reduction(single_axis=True, keepdims=False),
    "any": reduction(dtype=BOOL),
    "cumsum": scan(),
    "cumprod": scan(),
    "cummax": scan(negative_axis=False),
    "cumsum_reverse": scan(negative_axis=False),
    "reshape": unary(i.reshape_statics),
    "transpose": unary(i.permutation_statics),
    "swapaxes": unary(i.two_axes_statics, min_rank=1),
    "squeeze": squeezable(),
    "expand_dims": unary(i.new_axis_statics, grows=True),
    "broadcast_to": unary(i.leading_shape_statics, grows=True),
    "concatenate": joining(stack=False),
    "stack": joining(stack=True),
    "pad": unary(i.pad_statics, min_rank=1, grows=True),
    "slice": unary(i.index_statics("in-range"), min_rank=1),
    "strided_slice": unary(i.index_statics("strided"), min_rank=1),
    "slice_out_of_range": unary(i.index_statics("out-of-range"), min_rank=1),
    "dynamic_slice": dynamic_slice(),
    "dynamic_update_slice": dynamic_update_slice(),
    "at_set_shifted": at_shifted(),
    "at_add_shifted": at_shifted(),
    "at_min": at_range(),
    "at_max": at_range(),
    "at_add_indices": scatter_add(),
    "take": with_indices(take_index(clip=False), axis=True),
    "take_clip": with_indices(take_index(clip=True), axis=True),
    "index_array": with_indices(fancy_index, axis=False),
    "take_along_axis": with_indices(along_axis_index, axis=True),
    "roll": unary(i.roll_statics, min_rank=1),
    "flip": unary(i.axes_statics),
    "sort": unary(i.axis_statics, min_rank=1),
    "argsort": unary(i.axis_statics, min_rank=1),
    "matmul": contraction(),
    "dot_int": contraction(),
    "where": selection(same_shapes=False),
    "select": selection(same_shapes=True),
    "add_iota": unary(i.dimension_statics, min_rank=1),
    "arange_times": unary(min_rank=1),
    "tril": unary(i.diagonal_statics, min_rank=2),
}
assert set(FEEDS) <= set(BY_NAME), sorted(set(FEEDS) - set(BY_NAME))


def evaluate(op: str, operands: Sequence[np.ndarray], static: dict, *, x64: bool = False) -> np.ndarray:
    """numpy's value of a catalogue step (the catalogue's reference) in the dtype the dtype model
    gives the entry on these operands under the run's ``x64`` (``Op.result_dtype``: with x64 off a
    uint32 sum wraps modulo 2**32 and an index is int32, where numpy widens them; with it on, they
    are uint64 and int64, as numpy's)."""
    with np.errstate(all="ignore"):
        result = np.asarray(BY_NAME[op].reference(*operands, **static))
    return result.astype(BY_NAME[op].result_dtype(operands, x64=x64))


@st.composite
def programs(draw, device_ids: Sequence[int], *, axis_types: Sequence[str] = ("Auto",), max_steps: int = 6,
             entries: Optional[Sequence[str]] = None, x64: bool = False) -> Program:
    """A program over a mesh of devices from ``device_ids``:

    * one uint32 input to start from (rank 0 rare: ``inputs.shapes``), mostly cut over an axis of
      size > 1 (``sharding_specs``), on a mesh that mostly has such an axis (``cutting_meshes``);
      more inputs come as the steps need them, each with a dividing spec;
    * axes of a type from ``axis_types`` ("Auto", "Explicit");
    * 1 to ``max_steps`` steps, each a catalogue entry of ``entries`` (default: all of ``FEEDS``)
      that takes one of the values so far, followed by no layout change, a constraint or a
      device_put to a drawn dividing spec;
    * outputs: the last step's result and, maybe, one earlier step's; a dividing spec for each;
    * a subset of the inputs to donate;
    * numpy's value of every step in the dtype the dtype model gives under ``x64`` (the run's
      jax_enable_x64: uint64 sums and int64 indices where it is on).
    """
    if max_steps < 1:
        raise ValueError(f"max_steps={max_steps}, but a program has at least one step")
    usable = {name: FEEDS[name] for name in (entries or FEEDS)}
    shape = draw(i.shapes(0, 3))
    mesh = draw(cutting_meshes(device_ids, shape, max_axes=3))
    axis_type = draw(sampled_from(tuple(axis_types)))
    b = Builder(draw, mesh)
    b.new_input(VALUES, shape, cut=True)
    steps: List[Step] = []
    for _ in range(draw(st.integers(1, max_steps))):
        choices = [(name, feed) for name, feed in usable.items() if b.latest_first(feed.takes)]
        if not choices:
            break
        name, feed = draw(sampled_from(choices))
        x = draw(sampled_from(b.latest_first(feed.takes)))
        operands, static = feed.build(b, x)
        result = f"v{len(steps)}"
        b.values[result] = evaluate(name, [b.values[o] for o in operands], static, x64=x64)
        steps.append(Step(result, name, tuple(operands), tuple(sorted(static.items())), source=BY_NAME[name].source))
        change = draw(sampled_from((None,) + LAYOUT_CHANGES))
        if change is not None:
            spec = draw(dividing_specs(mesh, b.values[result].shape))
            moved = f"v{len(steps)}"
            b.values[moved] = b.values[result]
            steps.append(Step(moved, change, (result,), spec=spec))
    computed = [s.result for s in steps]
    outputs = [computed[-1]]
    earlier = computed[:-1]
    if earlier and draw(st.booleans()):
        outputs.append(draw(sampled_from(earlier)))
    out_specs = tuple(draw(dividing_specs(mesh, b.values[o].shape)) for o in outputs)
    donated = tuple(sorted(draw(st.lists(st.integers(0, len(b.inputs) - 1), unique=True, max_size=2))))
    return Program(mesh, axis_type, tuple(b.inputs), tuple(b.in_specs), tuple(steps), tuple(outputs),
                   out_specs, donated, tuple(b.values.items()))




def written_program(mesh: MeshModel, inputs: Sequence[Tuple[np.ndarray, Spec]], steps: Sequence[Step],
                    out_specs: Sequence[Spec], *, axis_type: str = "Auto", outputs: Optional[Sequence[str]] = None,
                    donated: Sequence[int] = (), x64: bool = False) -> Program:
    """A program written out (for explicit examples): inputs ``x0, x1, ...`` as ``(array, spec)``,
    the steps in order (a catalogue step's ``source`` filled in from its entry), the outputs
    (default: the last step's result) and their specs; numpy's values computed as ``programs``
    computes them (under the run's ``x64``)."""
    steps = [step if step.changes_layout else replace(step, source=BY_NAME[step.op].source) for step in steps]
    values = {f"x{k}": np.asarray(array) for k, (array, _) in enumerate(inputs)}
    for step in steps:
        operands = [values[o] for o in step.operands]
        values[step.result] = operands[0] if step.changes_layout else evaluate(step.op, operands, step.kwargs, x64=x64)
    outputs = tuple(outputs or (steps[-1].result,))
    if len(outputs) != len(out_specs):
        raise ValueError(f"{len(outputs)} outputs, but {len(out_specs)} out_specs")
    return Program(mesh, axis_type, tuple(values)[:len(inputs)], tuple(spec for _, spec in inputs), tuple(steps),
                   outputs, tuple(out_specs), tuple(donated), tuple(values.items()))


def rerun(program: Program, arrays: Sequence[np.ndarray], *, x64: bool = False) -> Tuple[np.ndarray, ...]:
    """numpy's value of each of ``program``'s outputs on other inputs ``arrays`` (of its inputs'
    shapes and dtypes), computed as ``programs`` computes them (a layout change passes its operand
    through)."""
    values = {name: np.asarray(x) for name, x in zip(program.inputs, arrays)}
    for step in program.steps:
        operands = [values[o] for o in step.operands]
        values[step.result] = operands[0] if step.changes_layout else evaluate(step.op, operands, step.kwargs, x64=x64)
    return tuple(values[o] for o in program.outputs)
