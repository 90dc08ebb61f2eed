"""Write a few lines of plain Python that reproduce a case without Hypothesis.

Every failure message ends with such a script: it sets the same platform and device count, builds
the same meshes (Auto or Explicit axes) and shardings, recreates the inputs bit for bit, and runs
the call, inside the mesh context where Explicit axes need one.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Sequence

import numpy as np

from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel

from .case import Case
from .verdict import array_literal, dtype_literal  # noqa: F401 - the scripts' literals, used here and by the suites


def preamble() -> list:
    """Imports, and the platform and (on CPU) the device count of this run."""
    return preamble_imports() + ["devices = {d.id: d for d in jax.devices()}"]


def preamble_imports() -> list:
    """The preamble up to its imports: the environment the backend will start with, and the
    imports (the backend not started yet)."""
    lines = ["import os"]
    platforms = compat.platforms_setting()
    if platforms:
        lines.append(f"os.environ['JAX_PLATFORMS'] = {platforms!r}")
    if bridge.platform() == "cpu":
        lines.append(f"os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count="
                     f"{len(bridge.live_device_ids())}'")
    lines += [
        "import numpy as np",
        "import jax, jax.numpy as jnp",
        "from jax import lax",
        "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P",
    ]
    if compat.CONSTRAIN_SOURCE["Explicit"].startswith("jax.experimental.shard."):
        lines.append("import jax.experimental.shard")  # (jax does not import it; a script's constrain names it)
    return lines


def tree_literal(tree) -> str:
    """An expression that rebuilds a pytree of dicts, lists and tuples of arrays exactly."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {tree_literal(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(tree_literal(v) for v in tree) + "]"
    if isinstance(tree, tuple):
        return "(" + "".join(tree_literal(v) + ", " for v in tree) + ")"
    return array_literal(np.asarray(tree))


def mesh_literal(mesh: MeshModel, axis_type: str = "Auto") -> str:
    types = "" if axis_type == "Auto" else \
        f", axis_types=(jax.sharding.AxisType.{axis_type},) * {len(mesh.shape)}"
    return (f"Mesh(np.array([devices[i] for i in {list(mesh.device_ids)}]).reshape({mesh.shape}), "
            f"{mesh.axis_names}{types})")


def spec_literal(spec) -> str:
    return "P(" + ", ".join(repr(e) for e in spec) + ")"


def sharding_literal(mesh_var: str, spec) -> str:
    return f"NamedSharding({mesh_var}, {spec_literal(spec)})"


def describe_layout(layout: Layout) -> str:
    """A one-line summary: mesh shape, axis names, device order, spec and global shape."""
    return f"{describe_mesh(layout.mesh)} {spec_literal(layout.spec)} shape {layout.shape}"


def describe_mesh(mesh: MeshModel) -> str:
    """``mesh(a=2,b=4; devices [...])``: axis names and sizes, and the device order."""
    names = ",".join(f"{n}={s}" for n, s in zip(mesh.axis_names, mesh.shape))
    return f"mesh({names}; devices {list(mesh.device_ids)})"


def script(lines: Iterable[str] = (), *, meshes: Optional[dict] = None, axis_type: str = "Auto",
           arrays: Optional[dict] = None, placed: Optional[dict] = None,
           in_context: Iterable[str] = ()) -> str:
    """A stand-alone script, indented for a failure message:

    * the preamble (platform, device count, imports);
    * ``name = Mesh(...)`` for each of ``meshes`` ({name: MeshModel}), every axis ``axis_type``;
    * ``name = <array>`` for each of ``arrays`` ({name: numpy array}, rebuilt bit for bit);
    * ``name = jax.device_put(<array>, NamedSharding(mesh, P(...)))`` for each of ``placed``
      ({name: (array, spec)}, on the first mesh);
    * ``lines``;
    * ``in_context``: more lines, inside the first mesh's context when its axes are Explicit
      (``jax.set_mesh``, or ``jax.sharding.use_mesh`` before it), else as they are.
    """
    body = preamble()
    for name, mesh in (meshes or {}).items():
        body.append(f"{name} = {mesh_literal(mesh, axis_type)}")
    for name, x in (arrays or {}).items():
        body.append(f"{name} = {array_literal(np.asarray(x))}")
    first_mesh = next(iter(meshes or {"mesh": None}))
    for name, (x, spec) in (placed or {}).items():
        body.append(f"{name} = jax.device_put({array_literal(np.asarray(x))}, "
                    f"{sharding_literal(first_mesh, spec)})")
    body += list(lines)
    in_context = list(in_context)
    indent = context_indent(axis_type, in_context)
    if indent:
        body.append(f"with {compat.MESH_CONTEXT_SOURCE}({first_mesh}):")
    body += [indent + line for line in in_context]
    return "\n".join("    " + line for line in body)


def context_indent(axis_type: str, in_context: Sequence[str]) -> str:
    """How far ``script`` indents its ``in_context`` lines (and so the lines that follow them): inside
    the mesh context an Explicit mesh needs, else not at all."""
    return "    " if in_context and axis_type != "Auto" else ""


def scripted_case(call: str, lines: Iterable[str] = (), *, outcomes: Optional[dict] = None, **script_parts) -> Case:
    """A Case for ``call`` whose reproduction is ``script(lines, **script_parts)`` (``outcomes``:
    the script's expression per check, for the script's verdict; see ``Case``)."""
    in_context = list(script_parts.pop("in_context", ()))
    return Case(call, script(lines, in_context=in_context, **script_parts), outcomes,
                indent=context_indent(script_parts.get("axis_type", "Auto"), in_context))


def in_a_child_lines(lines: Sequence[str]) -> list:
    """Script lines that run the preamble and ``lines`` in a fresh interpreter, as ``run_isolated``
    does (XLA may abort the process), leaving it as ``done`` (its exit status and output) and
    printing what it printed."""
    return ["import subprocess, sys",
            "# in a fresh interpreter (with this one's environment), as XLA may abort the process",
            "child = '\\n'.join([", *(f"    {line!r}," for line in preamble() + list(lines)), "])",
            "done = subprocess.run([sys.executable, '-c', child], capture_output=True, text=True)",
            "print(done.stdout, done.stderr[-2000:])"]


# The first line Python's faulthandler prints when a script that armed it (``dump_traceback_later(s,
# exit=True)``, for a program that may never return) has run that long: it then ends with status 1.
TIMEOUT_LINE = re.compile(r"^Timeout \(\d+:\d\d:\d\d\)!$")


def check_in_a_subprocess(call: str, lines: Sequence[str], run_isolated, *, printed: str, what: str = "result",
                          shows: str = "mismatch") -> None:
    """The script ``lines`` (after the repro preamble), run in a fresh interpreter by
    ``run_isolated`` (for a case XLA may abort the process on), exits 0 and prints ``printed`` last
    (checked as ``what``). The reproduction, as the property, runs them in a fresh interpreter,
    whose exit status and last printed line its verdict judges; where the script's faulthandler
    ended it (a program that never returns), the status check's name says so (``TIMEOUT_LINE``);
    ``shows``: what a wrong last line shows (``Case.equal``'s, for known-deviation symptoms: "values"
    where it says whether the values are numpy's)."""
    result = run_isolated(lines)
    hung = [line.strip() for line in result.stderr.splitlines() if TIMEOUT_LINE.match(line.strip())]
    status = f"exit status of the subprocess (negative: killed by a signal{''.join('; ' + h for h in hung[:1])})"
    case = scripted_case(call, in_a_child_lines(lines), outcomes={status: "done.returncode",
                                                     what: "done.stdout.strip().splitlines()[-1]"})
    case.equal(status, result.returncode, 0)
    case.equal(what, result.stdout.strip().splitlines()[-1], printed, shows=shows)


def shard_map_lines(body: str, in_specs, out_spec, *, check: bool = True, manual_axes=None):
    """``(setup lines, expression)`` for a reproduction script: the import the installed JAX's
    shard_map needs, and ``shard_map(<body>, mesh=mesh, ...)`` spelled as this version spells it
    (``jax.shard_map``/``check_vma`` from 0.6.1, ``jax.experimental.shard_map``/``check_rep``
    before; ``axis_names=`` for a body manual over some axes only)."""
    setup = [] if compat.SHARD_MAP_SOURCE == "jax.shard_map" else ["import jax.experimental.shard_map"]
    manual = "" if manual_axes is None else f", axis_names={set(manual_axes)!r}"
    specs = "(" + "".join(spec_literal(s) + ", " for s in in_specs) + ")"
    return setup, (f"{compat.SHARD_MAP_SOURCE}({body}, mesh=mesh, in_specs={specs}, "
                   f"out_specs={spec_literal(out_spec)}, {compat.SHARD_MAP_CHECK}={check}{manual})")
