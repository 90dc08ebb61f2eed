"""What a property ran, per function and way or context: the examples that ran a function in a way
(eagerly, under jit, in a shard_map body, ...) and how many of them ran it sharded (an operand or its
result cut over a mesh axis of size > 1), each example counted once per function and way. The
``tally`` fixture gives a property its Tally; the run report lists its rows (``sharded_runs``) and
the run page tabulates them."""

from __future__ import annotations

import collections
from typing import Dict, List, Tuple


class Tally:
    """Per (function, way): the examples counted, and whether each ran sharded (by identity: an
    example counted again for the same function and way counts once, sharded if either said so)."""

    def __init__(self):
        self.runs: Dict[Tuple[str, str], list] = collections.defaultdict(list)

    def count(self, function: str, way: str, sharded: bool, example=None) -> None:
        """Count ``example`` (None: a new one each time) as having run ``function`` in ``way``."""
        runs = self.runs[(str(function), str(way))]
        for k, (seen, was) in enumerate(runs):
            if example is not None and seen is example:
                runs[k] = (seen, was or bool(sharded))
                return
        runs.append((example, bool(sharded)))

    def __bool__(self) -> bool:
        return bool(self.runs)

    def rows(self) -> List[dict]:
        """One row per function and way: ``{"function", "way", "examples", "sharded"}``, in order."""
        return [{"function": f, "way": w, "examples": len(runs), "sharded": sum(s for _, s in runs)}
                for (f, w), runs in sorted(self.runs.items())]
