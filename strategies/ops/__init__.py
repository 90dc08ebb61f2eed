"""The operation catalogue, split by role: the ``Op`` type (``op``), the strategies that draw each
operation's arguments (``inputs``), numpy references written here (``references``), and the entry
table (``catalogue``)."""

from .catalogue import BY_NAME, CATALOGUE
from .op import Op

__all__ = ["BY_NAME", "CATALOGUE", "Op"]
