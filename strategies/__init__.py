"""Hypothesis strategies for sharding properties: meshes, PartitionSpecs, shapes, dtypes, arrays.

Each strategy is small, composable and documented; they return model objects (``MeshModel``,
spec tuples, ``Layout``) that the suites turn into JAX objects through ``conformance.jaxbridge``.
"""

from .arrays import arrays, dtype_of, dtypes, supported_dtype_names
from .meshes import axis_names, factorizations, mesh_shapes, meshes
from .shapes import (can_be_incongruent, congruent_shapes, incongruent_shapes, layouts,
                     layouts_sharing_shape, shard_shapes)
from .specs import dividing_specs, invalid_partition_specs, partition_specs

__all__ = [
    "arrays", "axis_names", "can_be_incongruent", "congruent_shapes", "dtype_of", "dividing_specs", "dtypes",
    "factorizations", "incongruent_shapes", "invalid_partition_specs", "layouts", "layouts_sharing_shape", "mesh_shapes",
    "meshes", "partition_specs", "shard_shapes", "supported_dtype_names",
]
