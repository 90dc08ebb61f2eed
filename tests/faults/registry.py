"""The fault registry (``@fault``), what every fault is made of (``wrap``), and the lookups the
fault bodies share. Fault bodies import JAX when they are planted, not before: the faults plugin
is loaded before the runner has set JAX's environment."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Callable, Dict, NamedTuple, Tuple

import numpy as np

from conformance.runner.areas import AREAS

UNKILLED_FILE = Path(__file__).with_name("unkilled.toml")


class Fault(NamedTuple):
    """A simulated regression: its name, what it breaks (one line), how to plant it, and the
    suite areas (the markers of suites/, a property file with its reproductions) that must fail
    under it."""

    name: str
    description: str
    plant: Callable[[], None]
    suites: Tuple[str, ...]


FAULTS: Dict[str, Fault] = {}


def fault(name: str, description: str, *, suites: Tuple[str, ...]):
    """Register the decorated function as the fault ``name``, which plants it:

    * ``description``: one line, what the simulated regression breaks;
    * ``suites``: the suite areas (markers of suites/, e.g. "named_sharding") whose properties
      must fail under it.
    """
    if name in FAULTS:
        raise ValueError(f"fault {name!r} is registered twice")
    if not description or "\n" in description:
        raise ValueError(f"fault {name!r} needs a one-line description")
    unknown = [area for area in suites if area not in AREAS]
    if unknown:
        raise ValueError(f"fault {name!r} targets {unknown}, which are not suite areas ({', '.join(AREAS)})")

    def register(plant: Callable[[], None]) -> Callable[[], None]:
        FAULTS[name] = Fault(name, description, plant, tuple(suites))
        return plant
    return register


def unkilled() -> Dict[str, str]:
    """The passing properties no fault kills, each with the reason (test id prefix -> reason),
    from ``unkilled.toml``."""
    entries = tomllib.loads(UNKILLED_FILE.read_text()).get("unkilled", [])
    return {entry["test"]: entry["reason"] for entry in entries}


def wrap(owner, name, make):
    """Replace ``owner.name`` by ``make(original)``; functions keep the original's name and doc."""
    original = getattr(owner, name)
    replacement = make(original)
    if callable(original) and not isinstance(replacement, (property, staticmethod)):
        replacement = functools.wraps(original)(replacement)
    setattr(owner, name, replacement)


def replacing(owner: Callable[[], object], name: str):
    """Make the decorated ``replace(original) -> replacement`` a fault's plant: planting it puts
    ``replace(original)`` in place of ``owner().name`` (``owner`` looks the object up when the fault
    is planted, after JAX has started)."""
    def decorate(replace: Callable) -> Callable[[], None]:
        @functools.wraps(replace)
        def plant() -> None:
            wrap(owner(), name, replace)
        return plant
    return decorate


def jax_module():
    import jax
    return jax


def lax_module():
    from jax import lax
    return lax


def jnp_module():
    import jax.numpy as jnp
    return jnp


def under_a_vmap() -> bool:
    """Whether the trace in effect is a vmap's (a planted fault that misbehaves only there)."""
    from conformance.jaxside import compat
    return "Batch" in (compat.current_trace_name() or "")


def named_sharding_class():
    from jax.sharding import NamedSharding
    return NamedSharding


def mesh_class():
    from jax.sharding import Mesh
    return Mesh


def mesh_utils_module():
    from jax.experimental import mesh_utils
    return mesh_utils


def replicated(sharding):
    """The same mesh with an empty PartitionSpec."""
    return named_sharding_class()(sharding.mesh, type(sharding.spec)())


def cycled_devices(pool, shape):
    """An array of ``shape`` filled with ``pool``'s devices in turn, repeating them as needed."""
    size = int(np.prod(shape))
    return np.array([pool[i % len(pool)] for i in range(size)]).reshape(shape)


def cycle(size):
    """A ppermute perm that sends each of ``size`` devices' values to the next one."""
    size = int(size)
    return [(i, (i + 1) % size) for i in range(size)]
