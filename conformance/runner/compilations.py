"""Count the programs a property asks JAX for, compiled or served by the persistent cache, and those
asked for twice (for the run report and the benchmark); and let compiled programs go when a process
holds too many."""

from __future__ import annotations

import ctypes
import gc
import os
from dataclasses import dataclass
from typing import Dict, List, Tuple

import jax

from conformance.jaxside import compat


@dataclass(frozen=True)
class Compilations:
    """What a process (or a property, as the difference of two) asked JAX to compile:

    * ``programs``: executables asked for (each jit/pmap/shard_map/AOT call JAX's own in-memory
      caches did not serve), compiled by XLA or served by the persistent cache;
    * ``compilations``: those XLA compiled; ``compile_seconds``: the time every request took
      (compiling, or loading from the cache);
    * ``served``: those the persistent compilation cache served;
    * ``duplicates``: requests for a program (``compat.program_key``) this process had asked for
      before: work done twice, a defect (``repeated``: module name, and the property that asked
      first, of each).
    """

    programs: int = 0
    compilations: int = 0
    compile_seconds: float = 0.0
    served: int = 0
    duplicates: int = 0
    repeated: tuple = ()

    def since(self, earlier: "Compilations") -> "Compilations":
        return Compilations(self.programs - earlier.programs, self.compilations - earlier.compilations,
                            self.compile_seconds - earlier.compile_seconds, self.served - earlier.served,
                            self.duplicates - earlier.duplicates, self.repeated[len(earlier.repeated):])


class CompileLedger:
    """The programs JAX asked for in this process since the ledger started listening (jax.monitoring's
    compile and cache events, and ``compat.watch_compile_requests``); ``asking`` names the property
    running now, so that a repeated program names the one that asked first."""

    def __init__(self):
        self.compile_events, self.compile_seconds, self.served, self.programs = 0, 0.0, 0, 0
        self.first_asked: Dict[str, str] = {}  # program key -> the property that first asked for it
        self.repeated: List[Tuple[str, str]] = []  # (module name, property that first asked)
        self.asking = "(outside a property)"
        self.counts_programs = False  # whether this JAX lets programs be counted

    def on_duration(self, event: str, duration: float, **_metadata) -> None:
        if event == compat.BACKEND_COMPILE_EVENT:
            self.compile_events += 1
            self.compile_seconds += duration

    def on_event(self, event: str, **_metadata) -> None:
        if event == compat.PERSISTENT_CACHE_HIT_EVENT:
            self.served += 1

    def on_request(self, module_name: str, key: str) -> None:
        self.programs += 1
        first = self.first_asked.get(key)
        if first is None:
            self.first_asked[key] = self.asking
        else:
            self.repeated.append((module_name, first))

    def snapshot(self) -> Compilations:
        # JAX's compile event times the whole request, a program the cache served included
        return Compilations(self.programs, self.compile_events - self.served, self.compile_seconds, self.served,
                            len(self.repeated), tuple(self.repeated))


def start_counting() -> CompileLedger:
    """A ledger listening to jax.monitoring and JAX's compile requests from now on (one per process:
    the runner keeps it in the config's stash)."""
    ledger = CompileLedger()
    jax.monitoring.register_event_duration_secs_listener(ledger.on_duration)
    jax.monitoring.register_event_listener(ledger.on_event)
    ledger.counts_programs = compat.watch_compile_requests(ledger.on_request)
    return ledger


# A serial run of the suites compiles thousands of programs, and JAX keeps every one of them
# (about 1 MiB each on 8 CPU devices: 3.6 GiB resident by the end, measured 2026-12-05). Properties
# define their functions once and reuse them within a property, rarely across properties, so once a
# process holds more than this, the programs compiled so far are let go after the property that
# ran. Each release costs the programs asked for again after it (at 1 GiB: four releases in a
# serial run, 27 programs asked twice); at 2 GiB a warm serial run was slower, 71-72 s against
# 61-63 s (two interleaved pairs, 2026-12-05).
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
    again) and hand the freed memory back to the system (what ``settle`` froze included)."""
    gc.unfreeze()
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


def settle() -> None:
    """After a property: what it left alive (mostly JAX's caches of its programs) is frozen out of
    Python's collector, whose full collections otherwise walk every object of every property before
    it (5 s of a 63 s warm serial run, measured 2026-12-05); a release unfreezes and collects it."""
    gc.freeze()
