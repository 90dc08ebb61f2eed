"""Device planning: which platform to run on and how many CPU devices to force, decided before JAX
starts its backend.

Nothing here imports JAX at module level: the device count can only be forced before the backend
starts, so ``plan_devices`` and ``environment_for`` are pure, and ``start_backend`` is the single
place that imports JAX and starts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

from . import environment

DEFAULT_CPU_DEVICES = 8
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
    elif env.get(environment.DEVICES):
        origin = f"${environment.DEVICES}"
        requested = _parse_count(env[environment.DEVICES], origin)
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


def start_backend(plan: DevicePlan, x64: bool, jax_was_imported: bool):
    """Start the planned backend and check it has the planned devices. ``jax_was_imported``: JAX
    was imported before the environment was set, so it read another one.

    Raises UsageError when the backend was already started by something else with another device
    count or platform, or does not come up.
    """
    import jax  # (only here: the environment above must be in place before JAX starts)

    from conformance.jaxside import compat

    if jax_was_imported and not compat.backend_initialized():
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
