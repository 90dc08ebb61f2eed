"""The seed tutorial's layouts, transcribed as data (no JAX).

The tutorial ran on a TPU with 8 devices. ``mesh_utils.create_device_mesh((8,))`` ordered them by
the torus as ``0 1 2 3 6 7 4 5``, and every picture it printed follows that order. The model's unit
tests reproduce each picture from this order; the suites reuse the specs with this backend's order.
"""

TPU_DEVICE_ORDER = (0, 1, 2, 3, 6, 7, 4, 5)
MESH_SHAPE = (4, 2)
AXIS_NAMES = ("a", "b")

# (PartitionSpec entries, picture as rows of device-id sets) for mesh_sharding(P(...)) on the
# 4x2 mesh; the picture is what jax.debug.visualize_array_sharding printed for an 8192x8192 array.
NAMED_PICTURES = (
    (("a", "b"), [[{0}, {1}], [{2}, {3}], [{6}, {7}], [{4}, {5}]]),
    (("b", "a"), [[{0}, {2}, {6}, {4}], [{1}, {3}, {7}, {5}]]),
    (("a", None), [[{0, 1}], [{2, 3}], [{6, 7}], [{4, 5}]]),
    ((None, "b"), [[{0, 2, 4, 6}, {1, 3, 5, 7}]]),
    ((None, "a"), [[{0, 1}, {2, 3}, {6, 7}, {4, 5}]]),
    ((("a", "b"), None), [[{0}], [{1}], [{2}], [{3}], [{6}], [{7}], [{4}], [{5}]]),
)

NAMED_SPECS = tuple(spec for spec, _ in NAMED_PICTURES)

# The tutorial's global array: 8192 x 8192 float32. The suites use a small array of the same rank
# that every tutorial layout divides.
TUTORIAL_SHAPE = (8192, 8192)
SMALL_SHAPE = (8, 8)

# The PositionalSharding pictures: (operations applied to PositionalSharding(create_device_mesh((8,))),
# picture). An operation is ("reshape", shape) or ("replicate", axis).
POSITIONAL_PICTURES = (
    ((("reshape", (8, 1)),), [[{0}], [{1}], [{2}], [{3}], [{6}], [{7}], [{4}], [{5}]]),
    ((("reshape", (4, 2)),), [[{0}, {1}], [{2}, {3}], [{6}, {7}], [{4}, {5}]]),
    ((("reshape", (1, 8)),), [[{0}, {1}, {2}, {3}, {6}, {7}, {4}, {5}]]),
    ((("reshape", (4, 2)), ("replicate", 0)), [[{0, 2, 4, 6}, {1, 3, 5, 7}]]),
    ((("reshape", (4, 2)), ("replicate", 1)), [[{0, 1}], [{2, 3}], [{6, 7}], [{4, 5}]]),
)
