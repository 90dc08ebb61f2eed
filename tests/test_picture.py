"""The picture parser against pictures JAX printed (copied from real runs), wrapped and cut-short
labels included."""

import pytest

from conformance.model.picture import PictureError, device_grid, parse_label, parse_picture

FOUR_BY_TWO = """
┌───────┬───────┐
│ CPU 0 │ CPU 1 │
├───────┼───────┤
│ CPU 2 │ CPU 3 │
├───────┼───────┤
│ CPU 4 │ CPU 5 │
├───────┼───────┤
│ CPU 6 │ CPU 7 │
└───────┴───────┘
"""

REPLICATED_COLUMNS = """
┌───────────┬───────────┐
│           │           │
│           │           │
│CPU 0,2,4,6│CPU 1,3,5,7│
│           │           │
│           │           │
└───────────┴───────────┘
"""

WRAPPED = """
┌─────────┬─────────┬─────────┐
│         │         │         │
│  CPU    │  CPU    │  CPU    │
│  0      │  1      │  10     │
│         │         │         │
├─────────┼─────────┼─────────┤
│  CPU    │  CPU    │  CPU    │
│  8      │  9      │  11,    │
│         │         │  12     │
└─────────┴─────────┴─────────┘
"""

CUT_SHORT = """
┌────┬────┬───┐
│ C… │CPU │C… │
│ 0  │10  │14 │
└────┴────┴───┘
"""


def test_four_by_two():
    """The tutorial's 4x2 picture: four rows of two single-device cells, in order."""
    picture = parse_picture(FOUR_BY_TWO)
    assert device_grid(picture) == tuple((frozenset({2 * r}), frozenset({2 * r + 1})) for r in range(4))
    assert {platform for row in picture for platform, _ in row} == {"CPU"}


def test_replicated_labels_list_every_device():
    assert device_grid(parse_picture(REPLICATED_COLUMNS)) == (
        (frozenset({0, 2, 4, 6}), frozenset({1, 3, 5, 7})),)


def test_wrapped_labels_are_joined():
    assert device_grid(parse_picture(WRAPPED)) == (
        (frozenset({0}), frozenset({1}), frozenset({10})),
        (frozenset({8}), frozenset({9}), frozenset({11, 12})))


@pytest.mark.parametrize("text, message", [
    (CUT_SHORT, "cut short"),
    ("nothing drawn", "no table"),
    (FOUR_BY_TWO.replace("└───────┴───────┘", ""), "no bottom border"),
    (FOUR_BY_TWO.replace("│ CPU 2 │ CPU 3 │", "│ CPU 2 CPU 3    │"), "does not follow the columns"),
    (FOUR_BY_TWO.replace("CPU 5", "CPU x"), "cannot read label"),
])
def test_unreadable_pictures_are_errors(text, message):
    """A picture that cannot be read exactly is an error, never a guess."""
    with pytest.raises(PictureError, match=message):
        parse_picture(text)


@pytest.mark.parametrize("label, expected", [
    ("TPU 0,2,4,6", ("TPU", {0, 2, 4, 6})),
    ("GPU 3", ("GPU", {3})),
    ("CPU 8, 9", ("CPU", {8, 9})),
])
def test_labels(label, expected):
    assert parse_label(label) == (expected[0], frozenset(expected[1]))


def test_a_number_split_by_wrapping_is_an_error():
    """rich may fold a long label inside a number; that must not read as two devices."""
    with pytest.raises(PictureError):
        parse_label("CPU 0,1 0")
