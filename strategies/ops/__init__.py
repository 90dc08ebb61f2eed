"""The operation catalogue, split by role: the ``Op`` type (``op``), the strategies that draw each
operation's arguments (``inputs``), numpy references written here (``references``), the curated
entry table (``catalogue``: ``CATALOGUE``), and the vocabulary of the rest of ``jax.numpy`` and
``jax.lax`` (``vocabulary``: ``VOCABULARY``). ``BY_NAME`` finds an entry of either."""

from typing import Dict

from .catalogue import CATALOGUE
from .op import Op
from . import vocabulary, vocabulary_indexing, vocabulary_lax_structure, vocabulary_linalg, vocabulary_shapes

VOCABULARY = vocabulary.VOCABULARY + vocabulary_shapes.ENTRIES + vocabulary_indexing.ENTRIES + \
    vocabulary_linalg.ENTRIES + vocabulary_lax_structure.ENTRIES
ENTRIES = CATALOGUE + VOCABULARY
BY_NAME: Dict[str, Op] = {op.name: op for op in ENTRIES}
assert len(BY_NAME) == len(ENTRIES), sorted(n for n in BY_NAME if sum(op.name == n for op in ENTRIES) > 1)

__all__ = ["BY_NAME", "CATALOGUE", "ENTRIES", "Op", "VOCABULARY"]
