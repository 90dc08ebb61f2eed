"""The reference model: what JAX should do, in plain Python and numpy.

Nothing here imports JAX or pytest (``tests/test_layers.py`` checks it), so what the model says
is independent of the library under test.

- ``layout``: meshes, PartitionSpecs and where each block of an array lives.
- ``positional``: the tutorial's PositionalSharding as device-id sets, and its NamedSharding
  translation.
- ``spmd``: pmap's in_axes/out_axes and the collectives, over per-device values.
- ``picture``: reading ``visualize_array_sharding``'s picture back into device-id sets.
- ``tutorial``: the seed tutorial's layouts and pictures, as data.
- ``program``: generated programs as data.
- ``dtypes``: result dtypes by JAX's documented type promotion (weak types, the x64 flag).
- ``sharding_rules``: whether the Explicit-sharding rules type a catalogue operation on given
  operand shardings, and the result's spec.
"""
