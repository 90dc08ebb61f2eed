"""A generated program (``strategies.programs``) as JAX source: one line per step, the functions the
suite runs built from that same text, and the stand-alone script a failure prints.

A catalogue step's line is its entry's source with the operands and static arguments put in
(``lambda x, *, axis: jnp.cumsum(x, axis=axis)`` with ``v0`` and ``axis=1`` reads
``v1 = jnp.cumsum(v0, axis=1)``); a layout change reads ``v2 = constrain(v1, NamedSharding(mesh,
P('a')))`` or ``v2 = jax.device_put(v1, NamedSharding(mesh, P('a')))``, where ``constrain`` is
``with_sharding_constraint`` (``reshard`` on Explicit axes).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import re
from typing import Callable, Dict, List, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from conformance.jaxside import bridge, compat
from conformance.model.program import Program, Step

from . import verdict as verdicts
from .case import Case
from .repro import (array_literal, context_indent, describe_mesh, dtype_literal, in_a_child_lines, mesh_literal,
                    script, sharding_literal, spec_literal, TIMEOUT_LINE)
from .ways import JIT_WAYS, Way


EXCEPTION_LINE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*(Error|Exception))(: ?(?P<message>.*))?$")  # (bare: no message)
FRAME_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<function>\S+)$')


def innermost_frame_of(stderr: str) -> str:
    """``module.function`` of the innermost frame of the last traceback a subprocess printed (its
    file's path read from the package folder on: ``.../site-packages/jax/_src/lax/lax.py`` is
    ``jax._src.lax.lax``); "" without one."""
    frames = [m for m in map(FRAME_LINE.match, stderr.splitlines()) if m]
    if not frames:
        return ""
    path = frames[-1]["path"].replace("\\", "/")
    module = path.rsplit("site-packages/", 1)[-1].removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    return f"{module}.{frames[-1]['function']}"


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: Dict[str, ast.expr]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        return self.mapping.get(node.id, node)


def _literal(value) -> ast.expr:
    return ast.parse(repr(value), mode="eval").body


def call_source(source: str, operands, static: dict) -> str:
    """The body of the lambda ``source`` with its parameters replaced: positional ones by the
    operand names, ``*xs`` by a tuple of the rest, keyword-only ones by ``static``'s literals."""
    fn = ast.parse(source, mode="eval").body
    if not isinstance(fn, ast.Lambda):
        raise ValueError(f"not a lambda: {source}")
    positional = [a.arg for a in fn.args.args]
    mapping: Dict[str, ast.expr] = {p: ast.Name(o, ast.Load()) for p, o in zip(positional, operands)}
    if fn.args.vararg is not None:
        mapping[fn.args.vararg.arg] = ast.Tuple([ast.Name(o, ast.Load()) for o in operands[len(positional):]],
                                                ast.Load())
    for a in fn.args.kwonlyargs:
        mapping[a.arg] = _literal(static[a.arg])
    return ast.unparse(_Substitute(mapping).visit(fn.body))


def expression(step: Step) -> str:
    """The step's right-hand side, as JAX source."""
    if step.op == "constraint":
        return f"constrain({step.operands[0]}, {sharding_literal('mesh', step.spec)})"
    if step.op == "device_put":
        return f"jax.device_put({step.operands[0]}, {sharding_literal('mesh', step.spec)})"
    return call_source(step.source, step.operands, step.kwargs)


def unsharded_expression(step: Step) -> str:
    """The right-hand side run on one device: a layout change passes its operand through."""
    return step.operands[0] if step.changes_layout else expression(step)


def function_lines(program: Program, name: str = "program", *, unsharded: bool = False,
                   every_value: bool = False) -> List[str]:
    """``def <name>(x0, ...):``, a line per step, and ``return (<outputs>,)`` (``every_value``:
    a generator that yields each step's name and value as it computes it, so that a step's value
    is had without running the steps after it)."""
    render = unsharded_expression if unsharded else expression
    if every_value:
        return ([f"def {name}({', '.join(program.inputs)}):"]
                + [line for s in program.steps for line in (f"    {s.result} = {render(s)}",
                                                            f"    yield {s.result!r}, {s.result}")])
    return ([f"def {name}({', '.join(program.inputs)}):"]
            + [f"    {s.result} = {render(s)}" for s in program.steps]
            + [f"    return ({''.join(o + ', ' for o in program.outputs)})"])


def namespace(program: Program) -> dict:
    """What the program's text refers to: jax, jnp, lax, np, NamedSharding, P, the mesh, and
    ``constrain`` for its axis type."""
    axis_type = program.axis_type
    return {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "NamedSharding": NamedSharding, "P": PartitionSpec,
            "mesh": bridge.jax_mesh(program.mesh, axis_type),
            "constrain": lambda x, s: compat.constrain(x, s, axis_type)}


def program_function(program: Program, *, unsharded: bool = False) -> Callable:
    """The program as a Python function, built from the lines its script shows."""
    scope = namespace(program)
    exec("\n".join(function_lines(program, unsharded=unsharded)), scope)  # our own text
    return scope["program"]


def prefix(program: Program, last: Step) -> Program:
    """The program's steps up to ``last`` (in order, ``last`` included), returning ``last``'s value."""
    return dataclasses.replace(program, steps=program.steps[:program.steps.index(last) + 1], outputs=(last.result,))


def prefix_function(program: Program, last: Step) -> Callable:
    """``prefix(program, last)`` as a function of the program's inputs that returns ``(last's
    value,)``: what a jit way runs to tell whether that step's value is already wrong (built from
    the same lines as the program's script)."""
    return program_function(prefix(program, last))


def revealing_function(program: Program) -> Callable:
    """The whole program as a function of its inputs that returns its outputs and then every
    step's value, in order: what a jit way runs to see each step's value as the program computes it
    (the outputs' layouts shaping the values before them)."""
    return program_function(dataclasses.replace(program, outputs=tuple(program.outputs) + tuple(
        s.result for s in program.steps)))


def step_function(program: Program, step: Step, *, unsharded: bool = False) -> Callable:
    """``env -> value``: the step's expression (the same text) over the values in ``env`` (name ->
    array); an operand used twice is passed once."""
    text = unsharded_expression(step) if unsharded else expression(step)
    names = list(dict.fromkeys(step.operands))
    fn = eval(f"lambda {', '.join(names)}: {text}", namespace(program))
    return lambda env: fn(*(env[n] for n in names))


def describe(program: Program) -> str:
    """A one-line call description for failure messages."""
    steps = "; ".join(f"{s.result} = {expression(s)}" for s in program.steps)
    inputs = ", ".join(f"{n}: {np.asarray(v).dtype}{list(np.shape(v))} {spec_literal(s)}"
                       for n, v, s in zip(program.inputs, program.arrays, program.in_specs))
    outputs = ", ".join(f"{o} {spec_literal(s)}" for o, s in zip(program.outputs, program.out_specs))
    return (f"program on {program.axis_type} {describe_mesh(program.mesh)}: inputs {inputs}; {steps}; "
            f"outputs {outputs}; donate {list(program.donated)}")


def run_lines(program: Program) -> List[str]:
    """The script lines after the inputs: the program, its unsharded twin, the shardings, and
    the three ways the suite runs it, each printing its outputs' values and shardings."""
    names = ", ".join(program.inputs)
    in_shardings = "".join(sharding_literal("mesh", s) + ", " for s in program.in_specs)
    out_shardings = "".join(sharding_literal("mesh", s) + ", " for s in program.out_specs)
    return [
        f"constrain = {compat.CONSTRAIN_SOURCE[program.axis_type]}",
        *function_lines(program),
        *function_lines(program, "unsharded", unsharded=True),
        "# each step's value, run eagerly and unsharded, up to the one asked for (what the steps' checks judge)",
        *function_lines(program, "program_values", every_value=True),
        *function_lines(program, "unsharded_values", unsharded=True, every_value=True),
        "value_of = lambda values, name: next(value for step, value in values if step == name)",
        f"in_shardings = ({in_shardings})",
        f"out_shardings = ({out_shardings})",
        f"placed = lambda: [jax.device_put(x, s) for x, s in zip(({names}{',' if len(program.inputs) == 1 else ''}), "
        "in_shardings)]",
        "show = lambda outs: [(np.asarray(o).tolist(), o.sharding) for o in outs]",
        "print('unsharded:', show(unsharded(*(jnp.asarray(x) for x in "
        f"({names}{',' if len(program.inputs) == 1 else ''})))))",
    ]


CONSTRAINED_LINE = ("constrained = jax.jit(lambda *a: tuple(constrain(o, s) for o, s in zip(program(*(constrain(x, s) "
                    "for x, s in zip(a, in_shardings))), out_shardings)))")


def in_context_lines(program: Program) -> List[str]:
    """The three ways, each printing its outputs (or what it raised, so the verdict that ends the
    script still runs)."""
    return [
        "def run(way, call):",
        "    try:",
        "        print(way, show(call()))",
        "    except Exception as e:",
        "        print(way, 'raised', type(e).__name__, str(e)[:1000])",
        f"run('{Way.EAGER}:', lambda: program(*placed()))",
        f"run('{Way.JIT_SHARDINGS}:', lambda: jax.jit(program, in_shardings=in_shardings, "
        f"out_shardings=out_shardings, donate_argnums={program.donated!r})(*placed()))",
        CONSTRAINED_LINE,
        f"run('{Way.JIT_CONSTRAINTS}:', lambda: constrained(*placed()))",
    ]


def program_script(program: Program) -> str:
    return script(run_lines(program), meshes={"mesh": program.mesh}, axis_type=program.axis_type,
                  arrays=dict(zip(program.inputs, program.arrays)), in_context=in_context_lines(program))


def program_outcomes(program: Program) -> dict:
    """The script's expression for each check of a program (see ``Case``): the two jit ways'
    calls and each of their outputs, and every step's value eagerly and unsharded."""
    names = ", ".join(program.inputs) + ("," if len(program.inputs) == 1 else "")
    calls = {Way.JIT_SHARDINGS: "jax.jit(program, in_shardings=in_shardings, out_shardings=out_shardings, "
                                f"donate_argnums={program.donated!r})(*placed())",
             Way.JIT_CONSTRAINTS: "constrained(*placed())"}
    outcomes = dict(calls)
    for k, name in enumerate(program.outputs):
        for way in calls:
            outcomes[f"{way} output {name}"] = outcomes[f"np.asarray of {way} output {name}"] = f"{calls[way]}[{k}]"
    outcomes["(0) unsharded program jitted on one device"] = f"jax.jit(unsharded)(*(jnp.asarray(x) for x in ({names})))"
    for s in program.steps:
        step = f"{s.result} = {expression(s)}"
        outcomes[f"{Way.EAGER} {step}"] = eager = f"value_of(program_values(*placed()), {s.result!r})"
        outcomes[f"np.asarray of {Way.EAGER} {step}"] = f"np.asarray({eager})"
        outcomes[f"(0) unsharded {step}"] = \
            f"value_of(unsharded_values(*(jnp.asarray(x) for x in ({names}))), {s.result!r})"
    return outcomes


def program_case(program: Program) -> Case:
    """The Case for a program: its one-line description and its script (ending, on a failure of
    an output's check, with that check's verdict)."""
    return Case(describe(program), program_script(program), program_outcomes(program),
                indent=context_indent(program.axis_type, in_context_lines(program)))


# What runs in a fresh interpreter by default: the two jit ways, named there by their letters
ISOLATED_WAYS = tuple(way.letter for way in JIT_WAYS)
EAGER = Way.EAGER.letter
# A program run in a fresh interpreter that has not ended this long after its start never will (one
# that XLA compiles into kernels that spin: dynamic_slice_join_never_returns): Python's faulthandler
# then prints where it waits, "Timeout (0:01:00)!" first (TIMEOUT_LINE), and ends it with status 1. A program of
# the property takes a few seconds there.
WATCHDOG_S = 60
WATCHDOG_LINE = f"import faulthandler; faulthandler.dump_traceback_later({WATCHDOG_S}, exit=True)"


RUNNING = "# running"  # (isolated_lines prints it and the way's mode before each way: the last says which raised)


def running_way(stdout: str) -> str:
    """The way ``isolated_lines`` was running when its interpreter ended (its last ``RUNNING`` line),
    or "" where none was printed."""
    marks = [line[len(RUNNING):].strip() for line in stdout.splitlines() if line.startswith(RUNNING)]
    return marks[-1] if marks else ""


def isolated_lines(program: Program, ways: Sequence[str] = ISOLATED_WAYS) -> List[str]:
    """Lines for a fresh interpreter (after the repro preamble) that run ``ways`` (the two jit ways,
    and "(a)", the program run eagerly step by step, when asked) and print three lines for each
    value they check, keyed by the way and the output's index (for "(a)", every step's result by
    name): ``<mode> <key> <its bytes as hex>``, ``<mode> <key> indices <JSON {device id: [[start,
    stop] per dimension]} of its addressable shards>`` and ``<mode> <key> differing <JSON list of
    the devices whose shard's bytes differ from the value's block>``; ``WATCHDOG_LINE`` first, so a
    program that never returns ends the interpreter."""
    run = (["outs = {}"] + ([f"print({RUNNING!r}, {EAGER!r}, flush=True)",
                             f"outs[{EAGER!r}] = dict(program_values(*placed()))"] if EAGER in ways else []) + [
        f"print({RUNNING!r}, {Way.JIT_SHARDINGS.letter!r}, flush=True)",
        f"outs[{Way.JIT_SHARDINGS.letter!r}] = dict(enumerate(jax.jit(program, in_shardings=in_shardings, "
        f"out_shardings=out_shardings, donate_argnums={program.donated!r})(*placed())))",
        CONSTRAINED_LINE,
        f"print({RUNNING!r}, {Way.JIT_CONSTRAINTS.letter!r}, flush=True)",
        f"outs[{Way.JIT_CONSTRAINTS.letter!r}] = dict(enumerate(constrained(*placed())))",
        "for mode, values in outs.items():",
        "    for k, o in values.items():",
        "        full = np.asarray(o)",
        "        print(mode, k, full.tobytes().hex(), flush=True)",
        "        blocks = {s.device.id: [s.index[d].indices(n)[:2] for d, n in enumerate(o.shape)] "
        "for s in o.addressable_shards}",
        "        print(mode, k, 'indices', json.dumps(blocks, separators=(',', ':')), flush=True)",
        "        differing = sorted(s.device.id for s in o.addressable_shards "
        "if np.asarray(s.data).tobytes() != np.ascontiguousarray(full[s.index]).tobytes())",
        "        print(mode, k, 'differing', json.dumps(differing, separators=(',', ':')), flush=True)",
    ])
    if program.axis_type != "Auto":
        run = [f"with {compat.MESH_CONTEXT_SOURCE}(mesh):"] + ["    " + line for line in run]
    return ([WATCHDOG_LINE, "import json", f"mesh = {mesh_literal(program.mesh, program.axis_type)}"]
            + [f"{n} = {array_literal(x)}" for n, x in zip(program.inputs, program.arrays)]
            + [line for line in run_lines(program) if not line.startswith("print(")] + run)


def printed_values(program: Program, mode: str) -> List[tuple]:
    """What ``isolated_lines`` prints for ``mode``, in order: ``(key, what it is, the value numpy
    gives, the step that lays it out or None)``: the outputs by index in (b) and (c), every step's
    result by name in (a)."""
    if mode == EAGER:
        return [(s.result, f"{s.result} = {expression(s)}", program.value(s.result), s) for s in program.steps]
    return [(str(k), f"output {name}", program.value(name), None) for k, name in enumerate(program.outputs)]


# What the parent reads back from isolated_lines' output (the same parsing in the property and in
# the script a failure prints): per (mode, output index), the value's hex and the shards' lines
PRINTED_LINES = [
    "printed, shards = {}, {}",
    "for words in (line.split() for line in done.stdout.splitlines() if line.startswith('(')):",
    "    if len(words) == 4 and words[2] in ('indices', 'differing'):",
    "        shards[(words[0], words[1], words[2])] = json.loads(words[3])",
    "    else:",
    "        printed[tuple(words[:2])] = words[2] if len(words) > 2 else ''",
    "index_map = lambda key: {int(d): tuple((start, max(start, stop)) for start, stop in b) "
    "for d, b in shards.get(key + ('indices',), {}).items()}",
]


def read_printed(stdout: str) -> dict:
    """``isolated_lines``' output as ``PRINTED_LINES`` reads it: the names ``printed`` (per (mode,
    output index), the value's hex), ``shards`` and ``index_map``."""
    import json
    import types
    namespace = {"json": json, "done": types.SimpleNamespace(stdout=stdout)}
    exec("\n".join(PRINTED_LINES), namespace)
    return namespace


def isolated_case(case: Case, program: Program, ways: Sequence[str], status: str) -> Case:
    """The Case of ``ways`` run in a fresh interpreter: ``case``'s call, and a script that runs
    ``isolated_lines`` in one as the property does; its verdict judges that interpreter's exit
    status (the check named ``status``), or an output's bytes, index map or shards as printed."""
    label = "/".join(ways)
    lines = [*in_a_child_lines(isolated_lines(program, ways)), "import json", *PRINTED_LINES]
    outcomes = {f"{label} in a subprocess": "done.returncode", status: "done.returncode"}
    for mode in ways:
        for k, what, expected, _ in printed_values(program, mode):
            key = (mode, k)
            outcomes[f"{mode} {what} printed by the subprocess"] = f"printed.get({key!r}) is not None"
            outcomes[f"{mode} {what}: bytes printed by the subprocess"] = f"len(bytes.fromhex(printed[{key!r}]))"
            outcomes[f"{mode} {what} (in a subprocess)"] = \
                (f"np.frombuffer(bytes.fromhex(printed[{key!r}]), {dtype_literal(expected.dtype)})"
                 f".reshape({expected.shape!r})")
            outcomes[f"{mode} {what} indices (in a subprocess)"] = f"index_map({key!r})"
            outcomes[f"{mode} {what}: devices whose shard differs from its block (in a subprocess)"] = \
                f"shards.get({key + ('differing',)!r})"
    return Case(case.call, script(lines), outcomes)


def stated_layout(program: Program, mode: str, key: str, step: Optional[Step]):
    """The layout a value ``isolated_lines`` prints must have: in (b) and (c) output ``key``'s out
    spec; in (a) a layout change's target; none stated for an eager step's other results (its
    shards are checked against its value only)."""
    from conformance.model.layout import Layout
    if mode == EAGER:
        return Layout(program.mesh, step.spec, np.shape(program.value(step.result))) if step.changes_layout else None
    name = program.outputs[int(key)]
    return Layout(program.mesh, program.out_specs[int(key)], np.shape(program.value(name)))


def check_jitted_in_subprocess(case: Case, program: Program, run_isolated: Callable, *,
                               classify: Callable[[str, str, str], Optional[str]] = lambda name, message, way: None,
                               ways: Sequence[str] = ISOLATED_WAYS,
                               layouts: Optional[Callable[[str, str, Optional[Step]], object]] = None,
                               way_context: Callable[..., object] = lambda label, output="": contextlib.nullcontext()
                               ) -> Optional[str]:
    """Run (b) and (c) (or ``ways``: "(a)" too) in a fresh interpreter (``run_isolated(lines)``,
    for a program XLA may abort on) and check each value it prints (``printed_values``: the
    outputs, and in (a) every step's result) as in-process runs do: numpy's value, the index map of
    ``layouts(mode, key, step)`` (default ``stated_layout``; None: none stated), and every shard
    holding its block of the value. Returns None when checked; else, on an Explicit mesh, the
    outcome ``classify(class name, message, the way it was running)`` names for the exception it raised (as
    in-process runs classify them). Anything else is a failure: an abort is one at the check of the
    exit status, whose message quotes XLA's ``Check failed`` line (a known deviation's symptom
    names it). The exit status is checked in ``way_context(label)`` (label: the ways joined by
    "/"), a jit way's output in ``way_context(mode, its name)``, each eager step's result in
    ``way_context("(a) <its name>")``: where a known deviation excuses a failure, the other ways
    are still checked (and, as in-process, not the values after it in its way). A failure's script
    is the subprocess's (``isolated_case``), with ``case``'s call."""
    label = "/".join(ways)
    layouts = layouts or (lambda mode, key, step: stated_layout(program, mode, key, step))
    result = run_isolated(isolated_lines(program, ways))
    raised = [m for m in map(EXCEPTION_LINE.match, result.stderr.strip().splitlines()) if m]
    if result.returncode > 0 and program.axis_type == "Explicit" and raised:
        outcome = classify(raised[-1]["name"].rpartition(".")[2], raised[-1]["message"] or "",
                           running_way(result.stdout))
        if outcome is not None:
            return outcome
    lines = result.stderr.strip().splitlines()
    checks = [line.strip() for line in lines if "Check failed" in line or TIMEOUT_LINE.match(line.strip())][:1]
    tail = " | ".join(checks + lines[-3:])
    status = f"exit status of {label} in a subprocess (negative: killed by a signal; {tail})"
    case = isolated_case(case, program, ways, status)
    with way_context(label):
        if result.returncode > 0 and raised:  # the program raised there: the failure names the exception
            name, message = raised[-1]["name"].rpartition(".")[2], raised[-1]["message"] or ""
            case.fail(f"{label} in a subprocess raised {name}: {message}, but should be accepted [{case.call}]",
                      check=f"{label} in a subprocess", shows="raised", raised=name, raised_message=message,
                      raised_in=innermost_frame_of(result.stderr),
                      verdict=case.verdict(f"{label} in a subprocess", lambda e: verdicts.equal_lines(e, 0)))
        case.equal(status, result.returncode, 0)
    if result.returncode != 0:
        return None  # (its failure was excused: no way printed its values)
    printed = read_printed(result.stdout)
    for mode in ways:
        for key, what, expected, step in printed_values(program, mode):  # ((a): each step apart, in order)
            checked = False
            with way_context(f"{EAGER} {key}") if mode == EAGER else way_context(mode, program.outputs[int(key)]):
                check_printed(case, printed, (mode, key), f"{mode} {what}", expected, layouts(mode, key, step))
                checked = True
            if not checked:
                break  # excused: as in-process, the values after it (computed from it) are not checked
    return None


def check_printed(case: Case, printed: dict, key: tuple, what: str, expected: np.ndarray, layout) -> None:
    """The value ``key`` as the subprocess printed it (``read_printed``): numpy's ``expected`` bit
    for bit, its shards' index map ``layout``'s (where one is stated), and every shard holding its
    block of the value."""
    got = printed["printed"].get(key)
    case.true(f"{what} printed by the subprocess", got is not None)
    case.equal(f"{what}: bytes printed by the subprocess", len(bytes.fromhex(got)), expected.nbytes)
    case.same_bits(f"{what} (in a subprocess)",
                   np.frombuffer(bytes.fromhex(got), expected.dtype).reshape(expected.shape), expected)
    if layout is not None:
        case.index_map(f"{what} indices (in a subprocess)", printed["index_map"](key), layout.blocks,
                       judged=lambda e: verdicts.equal_lines(e, layout.blocks))
    case.equal(f"{what}: devices whose shard differs from its block (in a subprocess)",
               printed["shards"].get(key + ("differing",)), [], shows="layout")
