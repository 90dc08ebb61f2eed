"""What ``jax.checkpoint`` saves for the backward pass under a policy, in our own words.

JAX's docs (``jax.checkpoint`` and "Gradient checkpointing with jax.checkpoint") say: a policy
decides, value by value, whether an intermediate of the checkpointed function may be saved; the
residuals the backward pass needs that may not be saved are recomputed from what may, and the
function's arguments are always at hand. The policies:

* ``nothing_saveable``: no intermediate (only the arguments);
* ``everything_saveable``: every intermediate (as if there were no checkpoint);
* ``dots_saveable`` (also called ``checkpoint_dots``): the outputs of matrix multiplications
  (``dot_general``), with or without batch dimensions;
* ``dots_with_no_batch_dims_saveable``: the outputs of ``dot_general`` that have no batch dimension;
* ``save_only_these_names(*names)``: the values named (``checkpoint_name``) one of ``names``;
* ``save_any_names_but_these(*names)``: named values whose name is not one of ``names``;
  unnamed values are not saved.

So the residuals are a frontier, found from what the derivative needs: a needed value that is an
argument is saved as the argument; one the policy lets be saved is saved; any other is recomputed,
and what recomputing it needs is needed in turn. A program here is a small dataflow graph whose
nodes say which values their derivative needs; ``saved_residuals`` walks it.

No JAX here: this is the reference the checkpoint property compares JAX's
``print_saved_residuals`` with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Optional, Sequence, Tuple

# The checkpoint policies, the suites' one list of them: suites/test_control_flow.py and
# suites/test_training.py draw theirs from it in this order (reordering it changes what a seed draws).
POLICIES = ("nothing_saveable", "everything_saveable", "dots_saveable", "checkpoint_dots",
            "dots_with_no_batch_dims_saveable", "save_only_these_names", "save_any_names_but_these")


@dataclass(frozen=True)
class Value:
    """One value of a checkpointed function: an argument, or an operation's output.

    ``kind``: "argument", "dot" (a dot_general; ``batch_dims`` says whether it has batch
    dimensions) or "elementwise" (any other operation; ``primitive`` names it, e.g. "cos");
    ``inputs``: the values it is computed from; ``name``: the ``checkpoint_name`` it carries, or
    None; ``shape``: its shape."""

    label: str
    kind: str
    shape: Tuple[int, ...]
    inputs: Tuple[str, ...] = ()
    primitive: str = ""
    batch_dims: bool = False
    name: Optional[str] = None


@dataclass(frozen=True)
class Program:
    """A checkpointed function as a graph: its values by label, and the values its derivative
    needs (the residuals there would be with no checkpoint at all)."""

    values: Dict[str, Value]
    needed: Tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    """A checkpoint policy by its name in ``jax.checkpoint_policies`` and the names it is given
    (for the two name-based policies)."""

    kind: str
    names: FrozenSet[str] = field(default_factory=frozenset)

    def __post_init__(self):
        if self.kind not in POLICIES:
            raise ValueError(f"unknown checkpoint policy {self.kind!r}")

    def saves(self, value: Value) -> bool:
        """Whether this policy lets ``value`` (an operation's output) be saved."""
        if self.kind == "nothing_saveable":
            return False
        if self.kind == "everything_saveable":
            return True
        if self.kind in ("dots_saveable", "checkpoint_dots"):
            return value.kind == "dot"
        if self.kind == "dots_with_no_batch_dims_saveable":
            return value.kind == "dot" and not value.batch_dims
        if self.kind == "save_only_these_names":
            return value.name is not None and value.name in self.names
        return value.name is not None and value.name not in self.names  # save_any_names_but_these


@dataclass(frozen=True, order=True)
class Residual:
    """A saved residual as ``print_saved_residuals`` describes one: where it comes from
    ("argument" with the argument's name, "named" with the checkpoint_name, or "output" with the
    primitive that computes it) and its shape."""

    source: str
    what: str
    shape: Tuple[int, ...]

    def __str__(self) -> str:
        where = {"argument": "from the argument", "named": "named", "output": "output of"}[self.source]
        return f"{list(self.shape)} {where} {self.what}"


def residual_of(value: Value) -> Residual:
    if value.kind == "argument":
        return Residual("argument", value.label, value.shape)
    if value.name is not None:
        return Residual("named", value.name, value.shape)
    return Residual("output", "dot_general" if value.kind == "dot" else value.primitive, value.shape)


def saved_residuals(program: Program, policy: Optional[Policy]) -> Tuple[Residual, ...]:
    """The residuals the backward pass reads, sorted: each needed value that is an argument or that
    the policy saves (``policy`` None: no checkpoint, everything saved); each other needed value is
    recomputed, and the values it is computed from are needed instead."""
    policy = policy or Policy("everything_saveable")
    saved, seen = set(), set()
    pending = list(program.needed)
    while pending:
        label = pending.pop()
        if label in seen:
            continue
        seen.add(label)
        value = program.values[label]
        if value.kind == "argument" or policy.saves(value):
            saved.add(label)
        else:
            pending.extend(value.inputs)
    return tuple(sorted(residual_of(program.values[label]) for label in saved))


def program(values: Sequence[Value], needed: Sequence[str]) -> Program:
    by_label = {v.label: v for v in values}
    for v in values:
        for i in v.inputs:
            if i not in by_label:
                raise ValueError(f"{v.label} is computed from {i}, which the program lacks")
    return Program(by_label, tuple(needed))


def sin_dot_program(m: int, k: int, n: int, *, name: str, constrained: bool) -> Program:
    """The checkpoint property's function of ``x`` [m, k], ``w`` [k, n], ``v`` [m, n]:

        d = x @ w                          (a dot with no batch dimension)
        c = d, or d under a sharding constraint (``constrained``)
        s = checkpoint_name(sin(c), name)
        g = einsum("ij,ij->i", s, v)      (a dot with batch dimension i)
        sum(sin(g))

    The derivative (reverse mode, with respect to x, w and v) needs: x and w (the first dot's
    cotangents), cos(c) (sin's), s and v (the second dot's), cos(g) (sin's); sum needs nothing."""
    values = [
        Value("x", "argument", (m, k)), Value("w", "argument", (k, n)), Value("v", "argument", (m, n)),
        Value("d", "dot", (m, n), ("x", "w")),
        *([Value("c", "elementwise", (m, n), ("d",), primitive="sharding_constraint")] if constrained else []),
        Value("cos_c", "elementwise", (m, n), ("c" if constrained else "d",), primitive="cos"),
        Value("s", "elementwise", (m, n), ("c" if constrained else "d",), primitive="sin", name=name),
        Value("g", "dot", (m,), ("s", "v"), batch_dims=True),
        Value("cos_g", "elementwise", (m,), ("g",), primitive="cos"),
    ]
    return program(values, ("x", "w", "cos_c", "s", "v", "cos_g"))
