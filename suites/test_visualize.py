"""jax.debug.visualize_array_sharding: the picture, read back cell by cell, is the model's grid of
blocks, each labelled with exactly the devices that hold it."""

import jax
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.checking import verdict as verdicts
from conformance.checking.layouts import layout_case
from conformance.jaxside import bridge, compat
from conformance.model import tutorial
from conformance.model.layout import Layout, MeshModel, block_grid
from conformance.model.picture import PictureError, device_grid, parse_picture
from conformance.model.positional import describe_operations, translate
from strategies import layouts
from strategies.tutorial import tutorial_examples, tutorial_layouts, tutorial_positional_chains

pytestmark = pytest.mark.visualize
DEVICES = bridge.live_device_ids()
TUTORIAL_LAYOUTS = tutorial_layouts(bridge.tutorial_mesh_ids((4, 2)))
TUTORIAL_CHAINS = tutorial_positional_chains(bridge.tutorial_mesh_ids((8,)))


# A script's lines that draw ``y`` (``picture()``: the text printed) and read the picture back
# (``picture_labels(text)``: each cell's text, row by row, the top border's corners splitting the columns),
# as conformance.model.picture reads it; {arguments}: visualize_array_sharding's.
PICTURE_LINES = [
    "import contextlib, io, re",
    "def picture():  # what visualize_array_sharding prints",
    "    printed = io.StringIO()",
    "    with contextlib.redirect_stdout(printed):",
    "        jax.debug.visualize_array_sharding(y, {arguments})",
    "    return printed.getvalue()",
    *verdicts.PICTURE_LABELS_LINES,
]
# The script's expressions for the checks of the picture, over its cells' labels ("CPU 0,2,4,6").
PICTURE_OUTCOMES = {
    "visualize_array_sharding": "picture()",
    "reading the picture": r"all(re.fullmatch(r'[A-Za-z]\w*\s+\d+(?:\s*,\s*\d+)*', cell) "
                           "for row in picture_labels(picture()) for cell in row)",
    "picture (rows of device-id sets)": r"tuple(tuple(frozenset(int(i) for i in "
                                        r"re.findall(r'\d+', cell.partition(' ')[2])) "
                                        "for cell in row) for row in picture_labels(picture()))",
    "device labels": "{cell.split()[0] for row in picture_labels(picture()) for cell in row}",
}


def check_picture(layout: Layout, options=None, sharding=None, sharding_source=None):
    """device_put zeros of the layout's shape (with ``sharding``, by default the layout's own
    NamedSharding; ``sharding_source``: its code in the script, with its import), draw them (with
    arguments under which every label shows whole, unless ``options`` says otherwise), and compare
    the picture with the model's grid for ``layout``."""
    x = np.zeros(layout.shape, np.float32)
    y = jax.device_put(x, bridge.layout_sharding(layout) if sharding is None else sharding)
    platform = next(iter(y.sharding.device_set)).platform.upper()
    options = bridge.picture_options(layout, platform) if options is None else options
    arguments = ", ".join(f"{k}={v!r}" for k, v in {"use_color": False, **options}.items())
    case = layout_case(layout, f"jax.debug.visualize_array_sharding(y, {arguments})",
                       [*(sharding_source or ()), "y = jax.device_put(x, sharding)",
                        *(line.replace("{arguments}", arguments) for line in PICTURE_LINES)], x=x,
                       outcomes=PICTURE_OUTCOMES)
    text = case.accepts("visualize_array_sharding", lambda: bridge.render_picture(y, **options))
    try:
        picture = parse_picture(text)
    except PictureError as e:
        case.fail(f"the picture cannot be read ({e}) [{case.call}]\n{text}", check="reading the picture",
                  verdict=case.verdict("reading the picture", lambda expression: verdicts.equal_lines(expression, True),
                                       exact=True))
    case.equal("picture (rows of device-id sets)", device_grid(picture), block_grid(layout))
    case.equal("device labels", {p for row in picture for p, _ in row}, {platform})


def single_device_layout():
    """The tutorial's first picture: an 8192x8192 array on one device (here 8x8)."""
    return Layout(MeshModel((jax.local_devices()[0].id,), (1,), ("a",)), (), tutorial.SMALL_SHAPE)


@given(layout=layouts(DEVICES, min_rank=1, max_rank=2, zero_size=False))
@tutorial_examples(TUTORIAL_LAYOUTS)
@example(layout=single_device_layout())
def test_picture_is_the_models_block_grid(layout):
    """For 1-d and 2-d arrays the picture has one cell per distinct block, in array order, each
    labelled with the platform and exactly the ids of the devices holding that block."""
    check_picture(layout)


POSITIONAL_IDS = [describe_operations(ops) for ops, _ in tutorial.POSITIONAL_PICTURES]


@bridge.needs_devices(8, "for the tutorial's pictures")
@pytest.mark.parametrize("index", range(len(POSITIONAL_IDS)), ids=POSITIONAL_IDS)
def test_tutorial_positional_pictures_via_named_sharding(index):
    """On every JAX: each PositionalSharding picture of the tutorial, drawn for the NamedSharding
    translation, is the positional model's grid."""
    model = TUTORIAL_CHAINS[index].model
    check_picture(translate(model).layout(tutorial.SMALL_SHAPE))


@compat.requires("PositionalSharding")
@bridge.needs_devices(8, "for the tutorial's pictures")
@pytest.mark.parametrize("index", range(len(POSITIONAL_IDS)), ids=POSITIONAL_IDS)
def test_tutorial_positional_pictures(index):
    """Each PositionalSharding picture of the tutorial (reshape(8, 1), (4, 2), (1, 8),
    replicate(0), replicate(1)), drawn for the positional sharding itself, is the model's grid."""
    chain = TUTORIAL_CHAINS[index]
    check_picture(translate(chain.model).layout(tutorial.SMALL_SHAPE),
                  sharding=bridge.positional_sharding(chain),
                  sharding_source=["from jax.sharding import PositionalSharding", f"sharding = {chain.code}"])


@given(shape=st.one_of(st.just(()), hnp.array_shapes(min_dims=3, max_dims=4, max_side=2)))
def test_other_ranks_are_rejected(shape):
    """Arrays of rank 0 or 3 and more have no picture: ValueError."""
    x = np.zeros(shape, np.float32)
    y = jax.device_put(x, jax.local_devices()[0])
    layout = Layout(MeshModel((jax.local_devices()[0].id,), (1,), ("a",)), (), shape)
    case = layout_case(layout, "jax.debug.visualize_array_sharding(x)", x=x, outcomes={
        "visualize_array_sharding": "jax.debug.visualize_array_sharding(jax.device_put(x, jax.local_devices()[0]), "
                                    "use_color=False)"})
    case.rejects("visualize_array_sharding", lambda: bridge.render_picture(y), (ValueError,))


@bridge.needs_devices(2, "to cut an array")
def test_zero_size_arrays_are_drawn():
    """A zero-size 2-d array sharded over every device is drawn like any other: one cell per
    column block, each labelled with its device."""
    mesh = bridge.line_mesh()
    check_picture(Layout(mesh, (None, "a"), (0, mesh.size)))


@bridge.needs_devices(4, "for a picture wider than 80 columns")
def test_default_arguments_label_every_cell():
    """Drawn with its default arguments, a (1, n) array cut into n columns still shows every
    device's label (the tutorial's 1x8 picture did, for its 8192x8192 array)."""
    mesh = bridge.line_mesh()
    check_picture(Layout(mesh, (None, "a"), (1, mesh.size)), options={})
