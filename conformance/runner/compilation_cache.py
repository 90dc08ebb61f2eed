"""Which persistent compilation cache a run uses: JAX's own (``jax_compilation_cache_dir``), on by
default in a folder per JAX, jaxlib and platform under the user's cache folder, shared by the xdist
workers of a run and by later runs. JAX keys each program by its module, devices, compile options,
XLA flags, backend and jaxlib, so a program served from the cache is the one a compilation would
give. A property that checks compilation itself is marked ``uncached`` and runs without it.

    --compilation-cache DIR     this folder
    --no-compilation-cache      none (every program is compiled)
    $CONFORMANCE_COMPILATION_CACHE=DIR or =off, as the options (an option wins)

This module imports no JAX: the choice is made before JAX starts; ``session`` applies it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from . import environment
from .devices import UsageError

UNCACHED_MARK = "uncached"  # a property that checks compilation itself (AOT, lowering, donation)
OFF_WORDS = ("off", "no", "0", "false", "none")


@dataclass(frozen=True)
class CacheChoice:
    """The run's persistent compilation cache: ``folder`` (None: no cache) and ``source``, what
    chose it (``default``, ``--compilation-cache``, ``$CONFORMANCE_COMPILATION_CACHE``) or, with no
    folder, why there is none."""

    folder: Optional[Path]
    source: str

    def describe(self) -> str:
        """The header's words: ``/path (default)`` or ``off (--no-compilation-cache)``."""
        return f"{self.folder} ({self.source})" if self.folder is not None else f"off ({self.source})"


def user_cache_root(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_CACHE_HOME/jax-conformance``, else ``~/.cache/jax-conformance``."""
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-conformance"


def default_folder(jax_version: str, jaxlib_version: str, platform: str,
                   env: Mapping[str, str] = os.environ) -> Path:
    """The default cache: one folder per JAX, jaxlib and platform (JAX's keys tell them apart too;
    the folders let a person delete one release's programs)."""
    return user_cache_root(env) / "compilation-cache" / f"jax-{jax_version}-jaxlib-{jaxlib_version}-{platform}"


def choose(asked_folder: Optional[str], asked_off: bool, jax_version: str, jaxlib_version: str,
           platform: str, env: Mapping[str, str] = os.environ, *, unavailable: Optional[str] = None) -> CacheChoice:
    """The cache the options and environment ask for (a UsageError when both options are given, or
    the folder cannot be made or written); ``unavailable``: why this JAX cannot use one here, so
    that a folder asked for is still checked but none is used, and the default one is not made."""
    choice = _asked(asked_folder, asked_off, jax_version, jaxlib_version, platform, env, unavailable is None)
    return CacheChoice(None, unavailable) if choice.folder is not None and unavailable is not None else choice


def _asked(asked_folder, asked_off, jax_version, jaxlib_version, platform, env, make_default: bool) -> CacheChoice:
    if asked_folder is not None and asked_off:
        raise UsageError("--compilation-cache DIR and --no-compilation-cache cannot be combined")
    if asked_off:
        return CacheChoice(None, "--no-compilation-cache")
    if asked_folder is not None:
        return CacheChoice(usable(Path(asked_folder), "--compilation-cache"), "--compilation-cache")
    from_env = (env.get(environment.COMPILATION_CACHE) or "").strip()
    origin = f"${environment.COMPILATION_CACHE}"
    if from_env.lower() in OFF_WORDS:
        return CacheChoice(None, f"{origin}={from_env}")
    if from_env:
        return CacheChoice(usable(Path(from_env), origin), origin)
    folder = default_folder(jax_version, jaxlib_version, platform, env)
    return CacheChoice(usable(folder, "the default cache") if make_default else folder, "default")


def usable(folder: Path, origin: str) -> Path:
    """``folder``, made if absent, absolute; a UsageError naming ``origin`` if it cannot be written."""
    folder = folder.expanduser().absolute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{origin}: cannot make the compilation cache folder {folder}: {e.strerror or e}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{origin}: the compilation cache folder {folder} is not writable "
                         f"(--no-compilation-cache runs without one)")
    return folder
