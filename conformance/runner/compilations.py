"""Count the backend compilations a property causes (jax.monitoring's compile events), for the run
report and the benchmark; and let compiled programs go when a process holds too many."""

from __future__ import annotations

import ctypes
import gc
import os

import jax

from conformance.jaxside import compat


class CompileCounter:
    """Backend compilations seen in this process since it started listening: a count and their
    seconds."""

    def __init__(self):
        self.count, self.seconds = 0, 0.0

    def __call__(self, event: str, duration: float, **_metadata) -> None:
        if event == compat.BACKEND_COMPILE_EVENT:
            self.count += 1
            self.seconds += duration

    def snapshot(self) -> tuple:
        return self.count, self.seconds


def start_counting() -> CompileCounter:
    """A counter listening to jax.monitoring from now on (one per process: the runner keeps it in
    the config's stash)."""
    counter = CompileCounter()
    jax.monitoring.register_event_duration_secs_listener(counter)
    return counter


# A serial run of the suites compiles thousands of programs, and JAX keeps every one of them
# (about 1.5 MiB each on 8 CPU devices: 3.5 GiB resident by the end). Properties define their
# functions once and reuse them within a property, rarely across properties, so once a process
# holds more than this, the programs compiled so far are let go after the property that ran.
RELEASE_ABOVE_MIB = 1024


def resident_mib() -> float:
    """This process's resident memory now, in MiB (0 where /proc is absent: nothing is released)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def release_compiled_programs() -> None:
    """Drop JAX's caches of traced and compiled programs (the next call of a function compiles it
    again) and hand the freed memory back to the system."""
    jax.clear_caches()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # glibc keeps freed memory otherwise
    except (OSError, AttributeError):
        pass


def release_if_holding_too_much(limit_mib: float = RELEASE_ABOVE_MIB) -> bool:
    """``release_compiled_programs`` when this process holds more than ``limit_mib``; whether it did."""
    if resident_mib() <= limit_mib:
        return False
    release_compiled_programs()
    return True
