"""Device planning: which platform to run on and how many CPU devices to force, decided before JAX
starts its backend (the device count can only be forced before then). Pure functions: nothing here
imports JAX; ``session.start_backend`` starts it as planned.
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
    ``--devices``, else ``$CONFORMANCE_DEVICES``, else JAX's own ``$JAX_NUM_CPU_DEVICES``, else a
    count already in ``$XLA_FLAGS``, else 8.
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
    elif env.get("JAX_NUM_CPU_DEVICES") and platform == "cpu":
        origin = "$JAX_NUM_CPU_DEVICES"
        requested = _parse_count(env["JAX_NUM_CPU_DEVICES"], origin)
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
    if "JAX_TRACEBACK_FILTERING" not in env:
        # A known deviation's symptom may name the function that raised (a bare AssertionError's
        # innermost frame); JAX's filtering would drop JAX's own frames from the traceback.
        changes["JAX_TRACEBACK_FILTERING"] = "off"
    if "XLA_PYTHON_CLIENT_PREALLOCATE" not in env:
        # Tiny arrays; without this every xdist worker on a GPU would grab most of its memory.
        changes["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    return changes
