"""The array vocabulary as the installed JAX exports it: every public function of ``jax.numpy`` and
``jax.lax`` (a callable that is neither a class, a module nor a type alias such as
``lax.PrecisionLike``; lax's primitives, ``*_p``, are not callable), by name, one list per
namespace. One list is kept per supported release
(``strategies/ops/vocabularies/jax-<version>.json``, beside the catalogue that covers it), so that
the coverage self-test (``tests/test_vocabulary.py``) and the report can say, per release, which
functions the catalogue covers and which are left out, and why (``strategies/ops/left_out.toml``).

    python -m conformance.jaxside.vocabulary write   the installed JAX's list, into strategies/ops/vocabularies/
    python -m conformance.jaxside.vocabulary check   exit 1, naming the differences, when the stored list differs
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
import types
from pathlib import Path
from typing import Dict, List

FOLDER = Path(__file__).resolve().parents[2] / "strategies" / "ops" / "vocabularies"
NAMESPACES = {"jnp": "jax.numpy", "lax": "jax.lax"}  # the short name entries are covered by -> the module


def public_functions(module_name: str) -> List[str]:
    """The public functions of ``module_name``: callables, not classes, modules or type aliases (whose
    type is ``typing``'s or ``types``'), not ``_``-prefixed."""
    module = importlib.import_module(module_name)

    def is_function(value) -> bool:
        return callable(value) and not inspect.isclass(value) and not isinstance(value, types.ModuleType) \
            and type(value).__module__ not in ("typing", "types")
    return sorted(name for name in dir(module) if not name.startswith("_") and is_function(getattr(module, name)))


def installed() -> Dict[str, object]:
    """The installed JAX's list: its release (the package's, as the inventory names it) and functions."""
    from importlib.metadata import version
    return {"jax": version("jax"), **{short: public_functions(module) for short, module in NAMESPACES.items()}}


def path_for(version: str) -> Path:
    return FOLDER / f"jax-{version}.json"


def stored(version: str) -> Dict[str, object]:
    """The stored list of ``version``; a missing one is a FileNotFoundError naming the command."""
    path = path_for(version)
    if not path.exists():
        raise FileNotFoundError(f"no vocabulary list for JAX {version} ({path}): run "
                                "`python -m conformance.jaxside.vocabulary write` in that release's environment")
    return json.loads(path.read_text())


def stored_lists() -> Dict[str, Dict[str, object]]:
    """Every stored list, by release (each file read once)."""
    listings = (json.loads(path.read_text()) for path in sorted(FOLDER.glob("jax-*.json")))
    return {str(listing["jax"]): listing for listing in listings}


def functions_of(listing: Dict[str, object]) -> List[str]:
    """A list's functions as "jnp.<name>" and "lax.<name>"."""
    return [f"{short}.{name}" for short in NAMESPACES for name in listing[short]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.jaxside.vocabulary",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("write", "check"))
    args = parser.parse_args(argv)
    now = installed()
    path = path_for(str(now["jax"]))
    if args.command == "write":
        FOLDER.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(now, indent=1) + "\n")
        print(f"{path}: {', '.join(f'{len(now[s])} {m} functions' for s, m in NAMESPACES.items())}")
        return 0
    old = stored(str(now["jax"]))
    differences = [f"{short}: {sign} {', '.join(names)}" for short in NAMESPACES
                   for sign, names in (("added", sorted(set(now[short]) - set(old[short]))),
                                       ("removed", sorted(set(old[short]) - set(now[short])))) if names]
    for line in differences:
        print(line)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
