"""What the pytest harness decides before JAX starts: platform, device count, seed, deviations.

Nothing here imports JAX at module level: the device count can only be forced before the backend
starts, so ``plan_devices`` and ``environment_for`` are pure, and ``start_backend`` is the single
place that imports JAX and starts it.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional

DEFAULT_CPU_DEVICES = 8
DEVICES_ENV = "CONFORMANCE_DEVICES"
SEED_ENV = "CONFORMANCE_SEED"
FORCE_FLAG = "--xla_force_host_platform_device_count"


class UsageError(Exception):
    """The run was asked for something it cannot honour; the message says what and why."""


@dataclass(frozen=True)
class DevicePlan:
    """Which platform to run on and, on CPU, how many devices to force."""

    platforms: str          # the JAX_PLATFORMS value to use
    forced: Optional[int]   # CPU device count to force; None on accelerators
    source: str             # where the count came from, for the report header

    @property
    def platform(self) -> str:
        return self.platforms.split(",")[0]


def _parse_count(text: str, origin: str) -> int:
    try:
        n = int(str(text).strip())
    except ValueError:
        raise UsageError(f"{origin}={text!r} is not a whole number of devices") from None
    if n < 1:
        raise UsageError(f"{origin}={n} cannot be honoured: at least one device is needed")
    return n


def plan_devices(option: Optional[str], backend: Optional[str], env: Mapping[str, str]) -> DevicePlan:
    """Decide the platform and the forced CPU device count.

    Platform: ``--backend``, else ``$JAX_PLATFORMS``, else ``cpu``. Device count on CPU:
    ``--devices``, else ``$CONFORMANCE_DEVICES``, else a count already in ``$XLA_FLAGS``, else 8.
    On an accelerator the devices present are used, and asking for a count is a usage error.
    """
    platforms = backend or env.get("JAX_PLATFORMS") or "cpu"
    platform = platforms.split(",")[0].strip().lower()
    requested, origin = None, None
    if option is not None:
        requested, origin = _parse_count(option, "--devices"), "--devices"
    elif env.get(DEVICES_ENV):
        requested, origin = _parse_count(env[DEVICES_ENV], f"${DEVICES_ENV}"), f"${DEVICES_ENV}"
    if platform != "cpu":
        if requested is not None:
            raise UsageError(
                f"{origin}={requested} cannot be honoured on the {platform!r} backend: a device "
                f"count can only be forced on CPU; on {platform} the suite uses the devices present")
        return DevicePlan(platforms, None, f"all {platform} devices present")
    if requested is None:
        match = re.search(rf"{FORCE_FLAG}=(\d+)", env.get("XLA_FLAGS", ""))
        if match:
            requested, origin = _parse_count(match[1], "XLA_FLAGS"), "$XLA_FLAGS"
        else:
            requested, origin = DEFAULT_CPU_DEVICES, "default"
    return DevicePlan(platforms, requested, origin)


def environment_for(plan: DevicePlan, env: Mapping[str, str]) -> dict:
    """The environment variables to set so that JAX starts as planned (and xdist workers too)."""
    changes = {"JAX_PLATFORMS": plan.platforms}
    if plan.forced is not None:
        flags = re.sub(rf"\s*{FORCE_FLAG}=\S+", "", env.get("XLA_FLAGS", "")).strip()
        changes["XLA_FLAGS"] = f"{flags} {FORCE_FLAG}={plan.forced}".strip()
        changes["JAX_NUM_CPU_DEVICES"] = str(plan.forced)  # wins over XLA_FLAGS from JAX 0.5.1
    if "XLA_PYTHON_CLIENT_PREALLOCATE" not in env:
        # Tiny arrays; without this every xdist worker on a GPU would grab most of its memory.
        changes["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    return changes


def start_backend(plan: DevicePlan, x64: bool):
    """Import JAX, start the planned backend and check it has the planned devices.

    Raises UsageError when the backend was already started by something else with another device
    count or platform, or does not come up.
    """
    already_imported = "jax" in sys.modules
    import jax
    from conformance import compat

    if already_imported and not compat.backend_initialized():
        # JAX read its environment before we set it: tell its config directly.
        jax.config.update("jax_platforms", plan.platforms)
        if plan.forced is not None:
            compat.set_cpu_device_count(plan.forced)
    if x64:
        jax.config.update("jax_enable_x64", True)
    try:
        devices = jax.devices()
    except RuntimeError as e:
        raise UsageError(f"the {plan.platform!r} backend did not start: {e}") from None
    platform = devices[0].platform
    gpu = ("gpu", "cuda", "rocm")
    if platform != plan.platform and not (plan.platform in gpu and platform in gpu):
        raise UsageError(f"asked for the {plan.platform!r} backend, but JAX started {platform!r} "
                         f"(the backend was already started before the harness ran)")
    if plan.forced is not None and jax.local_device_count() != plan.forced:
        raise UsageError(
            f"{plan.source} asked for {plan.forced} CPU devices, but the JAX backend has "
            f"{jax.local_device_count()}: it was started before the harness could set the device "
            f"count (something imported JAX and used it first)")
    return devices


def choose_seed(option_seed, env: Mapping[str, str]) -> str:
    """The Hypothesis seed for this run: ``--hypothesis-seed``, else ``$CONFORMANCE_SEED`` (so every
    xdist worker shares the controller's), else a fresh random one."""
    if option_seed is not None:
        return str(option_seed)
    return env.get(SEED_ENV) or str(random.randrange(2**32))


@dataclass(frozen=True)
class Deviation:
    """A behaviour a JAX version is known to get wrong: the test, the versions, a one-line reason."""

    test: str
    jax: str
    reason: str
    strict: bool = True
    reproduced_by: str = ""

    def matches(self, nodeid: str) -> bool:
        return nodeid == self.test or nodeid.endswith("/" + self.test) or \
            nodeid.split("[")[0] == self.test


# The deviations in effect for the installed JAX, set by the conftest at configure time (in every
# xdist worker): a random property asks deviation_in_effect() whether a deterministic test that
# pins a known deviation is expected to fail on this version.
ACTIVE_DEVIATIONS: List[Deviation] = []


def deviation_in_effect(test: str) -> Optional["Deviation"]:
    """The known deviation of the installed JAX for ``test`` (path::name[param]), or None."""
    return next((d for d in ACTIVE_DEVIATIONS if d.test == test), None)


def load_deviations(path: Path) -> List[Deviation]:
    """Read the known-deviation list; a malformed entry is a usage error naming it."""
    import tomllib
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: {e}") from None
    out = []
    for i, entry in enumerate(data.get("deviation", [])):
        missing = [k for k in ("test", "jax", "reason") if not entry.get(k)]
        if missing:
            raise UsageError(f"{path}: deviation #{i + 1} lacks {', '.join(missing)}")
        try:
            SpecifierSet(entry["jax"])
        except InvalidSpecifier:
            raise UsageError(f"{path}: deviation #{i + 1} has an invalid jax range {entry['jax']!r}") from None
        strict = entry.get("strict", True)
        if not isinstance(strict, bool):
            raise UsageError(f"{path}: deviation #{i + 1} has strict = {strict!r}, not true or false")
        if not strict and not entry.get("reproduced_by"):
            raise UsageError(f"{path}: deviation #{i + 1} is not strict, so it must name the strict "
                             "deterministic test that reproduces it (reproduced_by)")
        out.append(Deviation(entry["test"], entry["jax"], entry["reason"], strict,
                             entry.get("reproduced_by", "")))
    return out
