"""Read what ``jax.debug.visualize_array_sharding`` prints back into a grid of device-id sets.

Pure Python. The picture is a box-drawn table (rich's SQUARE box, as drawn without colour): the
top border fixes the column boundaries, row separators split the rows, and each cell's text,
joined across its lines, is a label such as ``CPU 0,2,4,6`` (platform, then device ids). A label
wrapped over several lines is joined; a label cut short with an ellipsis cannot be read and is an
error, as is anything that is not such a table.
"""

from __future__ import annotations

import re
from typing import FrozenSet, Tuple

CORNERS_TOP = "┌┬┐"
LABEL = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s+(\d+(?:\s*,\s*\d+)*)$")


class PictureError(ValueError):
    """The text is not a readable sharding picture."""


def parse_picture(text: str) -> Tuple[Tuple[Tuple[str, FrozenSet[int]], ...], ...]:
    """Rows of cells, each ``(platform, device ids)``, in the order drawn."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].startswith("┌"):
        raise PictureError(f"no table found in {text!r}")
    top = lines[0]
    edges = [i for i, ch in enumerate(top) if ch in CORNERS_TOP]
    if len(edges) < 2 or top[edges[-1]] != "┐":
        raise PictureError(f"malformed top border {top!r}")
    rows, current = [], []
    for line in lines[1:]:
        if line[0] in "├└":
            if not current:
                raise PictureError(f"empty row before {line!r}")
            rows.append(current)
            current = []
            if line[0] == "└":
                break
        elif line[0] == "│":
            if len(line) <= edges[-1] or any(line[e] != "│" for e in edges):
                raise PictureError(f"row {line!r} does not follow the columns of {top!r}")
            current.append(line)
        else:
            raise PictureError(f"unexpected line {line!r}")
    else:
        raise PictureError("the table has no bottom border")
    grid = []
    for row in rows:
        cells = []
        for left, right in zip(edges, edges[1:]):
            label = " ".join(" ".join(line[left + 1:right].split()) for line in row).strip()
            cells.append(parse_label(label))
        grid.append(tuple(cells))
    return tuple(grid)


def parse_label(label: str) -> Tuple[str, FrozenSet[int]]:
    """``"CPU 0,2,4,6"`` -> ``("CPU", {0, 2, 4, 6})``."""
    if "…" in label:
        raise PictureError(f"label {label!r} is cut short")
    # A label wrapped at a comma comes back as "0, 2"; at a number boundary it is still digits.
    match = LABEL.match(label)
    if not match:
        raise PictureError(f"cannot read label {label!r}")
    return match[1], frozenset(int(i) for i in match[2].replace(" ", "").split(","))


def device_grid(picture) -> Tuple[Tuple[FrozenSet[int], ...], ...]:
    """Just the device-id sets of a parsed picture."""
    return tuple(tuple(ids for _, ids in row) for row in picture)
