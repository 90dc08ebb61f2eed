"""Write a few lines of plain Python that reproduce a case without Hypothesis.

Every failure message ends with such a script: it sets the same platform and device count, builds
the same mesh and sharding, and recreates the input bit for bit.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Optional

import numpy as np

from .model import Layout, MeshModel


def preamble() -> list:
    """Imports, and the platform/device-count environment this run used."""
    lines = ["import os"]
    platforms = os.environ.get("JAX_PLATFORMS", "")
    if platforms:
        lines.append(f"os.environ['JAX_PLATFORMS'] = {platforms!r}")
    match = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
    if match and platforms.split(",")[0] in ("", "cpu"):
        lines.append(f"os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count={match[1]}'")
    lines += [
        "import numpy as np",
        "import jax, jax.numpy as jnp",
        "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P",
        "devices = {d.id: d for d in jax.devices()}",
    ]
    return lines


def dtype_literal(dtype) -> str:
    name = np.dtype(dtype).name
    return "jnp.bfloat16" if name == "bfloat16" else f"np.{name}"


def array_literal(x: np.ndarray) -> str:
    """An expression that rebuilds ``x`` exactly (same dtype, shape and bits)."""
    x = np.asarray(x)  # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
    return (f"np.frombuffer(bytes.fromhex('{x.tobytes().hex()}'), dtype={dtype_literal(x.dtype)})"
            f".reshape({tuple(x.shape)})")


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


def script(lines: Iterable[str], *, meshes: Optional[dict] = None, arrays: Optional[dict] = None) -> str:
    """The preamble, then ``name = Mesh(...)`` for each mesh, ``name = array`` for each array, then
    ``lines``; indented for a failure message."""
    body = preamble()
    for name, mesh in (meshes or {}).items():
        body.append(f"{name} = {mesh_literal(mesh)}")
    for name, x in (arrays or {}).items():
        body.append(f"{name} = {array_literal(np.asarray(x))}")
    body += list(lines)
    return "\n".join("    " + line for line in body)
