"""The suite areas: one pytest marker per file of ``suites/`` (every property carries exactly
one), and the order the areas run in."""

from __future__ import annotations

from pathlib import Path

AREAS = {
    "congruence": "a sharding is accepted exactly when every tiled dimension divides",
    "named_sharding": "NamedSharding / Mesh / PartitionSpec layouts against the model",
    "device_put": "device_put round trips, shard placement, resharding, computation follows sharding",
    "positional_sharding": "PositionalSharding reshape/replicate, and its NamedSharding translation",
    "mesh": "create_device_mesh, make_mesh and Mesh against the model",
    "visualize": "visualize_array_sharding's pictures against the model's block grid",
    "pmap": "pmap in_axes/out_axes, static arguments, tracing and size errors against the model",
    "collectives": "psum and the other collectives under pmap and shard_map against the model",
    "traced_inspection": "inspect/visualize_array_sharding and jax.typeof inside jit and shard_map, against the model",
    "aot": "lower().compile(): compiled shardings against the model, and calls with other layouts",
    "argument_forms": "the argument forms the API's signatures allow (lists or tuples, negative axes, spec and "
                      "sharding spellings, keywords) give the canonical answer or the documented refusal",
    "out_sharding": "jax.numpy creators with device= / out_sharding= and the jnp and lax operations that take "
                    "out_sharding= or sharding=, on Auto and Explicit meshes, against numpy and the layout model",
    "api_parameters": "the other parameters of the transformations (jit, vmap, grad, vjp, jvp, linearize, "
                      "eval_shape, checkpoint, pmap), device queries, jax.stages methods, sharding helpers and "
                      "collectives, against numpy, the model or the unsharded run",
    "calling_contexts": "every computing entry point of the inventory eagerly, under jit (with in/out shardings, on "
                        "an Explicit mesh), in a shard_map body, under vmap and under grad, against numpy",
    "multihost_utils": "multihost_utils and make_array_from_process_local_data on one process, against the "
                       "multi-process model with one process",
    "shard_map_bodies": "catalogue operations and multi-axis collectives inside shard_map bodies, against the model",
    "vmap": "vmap over sharded arrays and shard_map bodies, and spmd_axis_name, against per-example results",
    "autodiff": "grad/value_and_grad/jvp/vjp of sharded jit and shard_map code equal the "
                "unsharded program's",
    "control_flow": "scan/fori/while/cond/switch, checkpoint policies and donation on sharded values "
                    "equal the unsharded run",
    "random": "jax.random with sharded keys and outputs equals the unsharded draw, laid out as asked",
    "random_samplers": "every jax.random sampler and key function with each of its parameters: the draw sharded "
                       "equals it unsharded, in its distribution's support, with the shape, dtype and layout asked",
    "operand_layouts": "UNCONSTRAINED constraints, reshapes across sharded dimensions and sharded contractions, "
                       "against numpy and the model",
    "model_programs": "MLPs and transformer blocks under data/FSDP/tensor/sequence-parallel layouts "
                      "equal the one-device run",
    "training": "training steps (value_and_grad, Adam, donation) and scanned, rematerialized layer stacks "
                "equal the one-device run",
    "sharding_invariance": "an operation catalogue on sharded inputs equals unsharded execution",
    "programs": "generated chains of catalogue operations and layout changes equal the unsharded run",
    "multiprocess": "arrays and collectives across processes (--processes N), against the model",
}

# The order suite files run in: cheap checks that a broken JAX fails first (layouts and their
# congruence, meshes, device_put), then the costlier ones (collectives and pmap compile per
# example, the operation catalogue most of all). Measured by python -m tests.faults.killmap: the
# median time to the first failure with -x across the fault catalogue. A file of deterministic
# reproductions runs just before the property it explains.
SUITE_ORDER = ("congruence", "named_sharding", "mesh", "device_put", "visualize", "positional_sharding",
               "collectives", "pmap", "traced_inspection", "aot", "argument_forms", "out_sharding", "api_parameters",
               "calling_contexts", "multihost_utils",
               "shard_map_bodies", "vmap",
               "autodiff", "control_flow", "random", "random_samplers", "operand_layouts", "model_programs", "training",
               "sharding_invariance_reproductions", "sharding_invariance",
               "programs_reproductions", "programs", "program_contexts", "multiprocess")


def in_suites(nodeid: str) -> bool:
    """Whether a test id is a property of suites/ (the rest are self-tests)."""
    return nodeid.startswith("suites/")


def suite_rank(item) -> int:
    """Where an item's suite file comes in SUITE_ORDER (tests outside suites/ keep their place
    first)."""
    if not in_suites(item.nodeid):
        return -1
    stem = Path(str(item.path)).stem.removeprefix("test_")
    return SUITE_ORDER.index(stem) if stem in SUITE_ORDER else len(SUITE_ORDER)
