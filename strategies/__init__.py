"""Hypothesis strategies for sharding properties: meshes, PartitionSpecs, shapes, dtypes, arrays,
pmap cases, positional-sharding chains, the tutorial's examples, and the operation catalogue
(``strategies.ops``, its examples in ``strategies.ops.examples``). Where a property is about
sharding, the draws mostly shard: meshes and specs that cut (``cutting_meshes``,
``cutting_specs``, ``sharding_specs``), arrays whose elements vary (``arrays.varied``);
``tests/test_draw_statistics.py`` measures how often, against stated floors.

Each strategy is small, composable and documented, and draws model objects (``MeshModel``, spec
tuples, ``Layout``, ...) only: no JAX here (``tests/test_layers.py`` checks it). The devices to draw
from come in as arguments (a suite reads them from ``conformance.jaxside.bridge``), so the same
strategy adapts to 8 forced CPU devices, 1 GPU or a TPU slice; the suites turn what is drawn into
JAX objects through the bridge.
"""

from .arrays import arrays, dtype_of, dtypes, supported_dtype_names
from .meshes import axis_names, cutting_meshes, factorizations, mesh_shapes, meshes
from .shapes import (can_be_incongruent, congruent_shapes, incongruent_shapes, layouts,
                     layouts_sharing_shape, shard_shapes)
from .specs import can_cut, cutting_specs, dividing_specs, invalid_partition_specs, partition_specs, sharding_specs

__all__ = [
    "arrays", "axis_names", "can_be_incongruent", "can_cut", "congruent_shapes", "cutting_meshes", "cutting_specs",
    "dtype_of", "dividing_specs", "dtypes", "factorizations", "incongruent_shapes", "invalid_partition_specs",
    "layouts", "layouts_sharing_shape", "mesh_shapes", "meshes", "partition_specs", "shard_shapes", "sharding_specs",
    "supported_dtype_names",
]
