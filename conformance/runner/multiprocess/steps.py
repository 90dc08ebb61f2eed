"""The steps every process of a multi-process run executes in lockstep (see ``protocol``).

A step takes a JSON description (a mesh as global device ids, shape and axis names; a spec; a global
shape; a seed for the values) and answers with what this process can see: its addressable shards
(device id, block, values) and any whole values it computed. The global array's values are
``values(shape, seed)``, which every process can compute, so no data is sent around.
"""

from __future__ import annotations

from typing import List

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, normalize_index


def values(shape, seed: int) -> np.ndarray:
    """The global array of a step: distinct small integers, as int32."""
    return (np.arange(int(np.prod(shape)), dtype=np.int64) * 7 + seed).astype(np.int32).reshape(shape) % 1000


def mesh_of(payload) -> MeshModel:
    m = payload["mesh"]
    return MeshModel(tuple(m["ids"]), tuple(m["shape"]), tuple(m["names"]))


def describe(mesh: MeshModel) -> dict:
    return {"ids": list(mesh.device_ids), "shape": list(mesh.shape), "names": list(mesh.axis_names)}


def sharding_of(payload):
    return bridge.named_sharding(mesh_of(payload), tuple(tuple(e) if isinstance(e, list) else e
                                                  for e in payload["spec"]))


def shard_answer(array) -> List:
    """This process's addressable shards: [device id, block, values]."""
    return [[s.device.id, [list(b) for b in normalize_index(s.index, array.shape)],
             np.asarray(s.data).tolist()] for s in array.addressable_shards]


def layout(payload):
    """make_array_from_callback of the global values; the shards this process addresses."""
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    array = compat.make_array_from_callback(shape, sharding_of(payload), lambda index: x[index], x.dtype)
    return {"fully_addressable": bool(array.is_fully_addressable), "shards": shard_answer(array)}


def from_process_local_data(payload):
    """make_array_from_process_local_data with this process's rows (dimension 0 split by
    process, as the model's blocks of this process's devices say)."""
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    start, stop = payload["rows"][jax.process_index()]
    array = jax.make_array_from_process_local_data(sharding_of(payload), x[start:stop], shape)
    return {"shards": shard_answer(array)}


def allgather(payload):
    """process_allgather of the global array: the whole value, on this process."""
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    array = compat.make_array_from_callback(shape, sharding_of(payload), lambda index: x[index], x.dtype)
    gathered = np.asarray(compat.process_allgather(array)).tolist()
    compat.settle_after_partial_read()
    return {"gathered": gathered}


def collectives(payload):
    """Over the mesh's axis ``axis`` (spanning processes): psum and tiled all_gather under
    shard_map (jit), and jnp.sum under jit with a replicated output; each process's shards.
    Each result is waited for before the next is dispatched, unless ``in_flight`` (all three
    dispatched back to back, then read)."""
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    mesh, axis, spec = mesh_of(payload), payload["axis"], tuple(payload["spec"])
    array = jax.make_array_from_callback(shape, sharding_of(payload), lambda index: x[index])
    programs = {
        "psum": jax.jit(compat.shard_map(lambda a: lax.psum(a, axis), bridge.jax_mesh(mesh), (spec,), spec,
                                         check=False)),
        "all_gather": jax.jit(compat.shard_map(lambda a: lax.all_gather(a, axis, tiled=True),
                                               bridge.jax_mesh(mesh), (spec,), (), check=False)),
        "sum": jax.jit(lambda a: jnp.sum(a, axis=0), out_shardings=sharding_of(dict(payload, spec=[]))),
    }
    results = {}
    for name, program in programs.items():
        results[name] = program(array)
        if not payload.get("in_flight"):
            jax.block_until_ready(results[name])
    return {name: shard_answer(result) for name, result in results.items()}


def pmap_psum(payload):
    """pmap over this process's devices of psum over the pmapped axis, which spans every process:
    row i of the local input is ``values`` row (process offset + i)."""
    n_local, width = jax.local_device_count(), payload["width"]
    x = values((jax.device_count(), width), payload["seed"])
    offset = jax.process_index() * n_local
    out = jax.pmap(lambda a: lax.psum(a, "i"), axis_name="i")(x[offset:offset + n_local])
    return {"rows": np.asarray(out).tolist()}


def process_rows(mesh: MeshModel, spec, shape, owner) -> dict:
    """{process: (start, stop)} rows of dimension 0 that each process's devices hold, where they
    form one contiguous range (as make_array_from_process_local_data needs)."""
    layout = Layout(mesh, spec, shape)
    rows = {}
    for device, block in layout.blocks.items():
        p = owner[device]
        lo, hi = block[0]
        start, stop = rows.get(p, (lo, hi))
        rows[p] = (min(start, lo), max(stop, hi))
    return rows


def device_put(payload):
    """jax.device_put onto a sharding over devices of several processes, from ``payload["source"]``:
    "host" (the same numpy value on every process), "local" (an array committed to this process's
    first device), or a layout {"mesh", "spec"} of the same global values (a global array to
    reshard). Answers this process's shards, or the error device_put raised."""
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    source = payload["source"]
    if source == "host":
        value = x
    elif source == "local":
        value = jax.device_put(x, jax.local_devices()[0])
    else:
        value = compat.make_array_from_callback(shape, sharding_of(dict(payload, **source)),
                                                lambda index: x[index], x.dtype)
    try:
        array = jax.device_put(value, sharding_of(payload))
        answer = {"shards": shard_answer(array)}
    except Exception as e:  # noqa: BLE001 - which error, if any, is what the property checks
        return {"raised": type(e).__name__, "message": " ".join(str(e).split())[:300]}
    return answer


# What the protocol runs, by the name the leader publishes.
STEPS = {step.__name__: step for step in (layout, from_process_local_data, allgather, collectives,
                                          pmap_psum, device_put)}


# --- multihost_utils broadcast_one_to_all and process_allgather (issue 26) ----------------------
def local_leaves(payload, process: int) -> List[np.ndarray]:
    """Process ``process``'s own leaves: ``values`` of each leaf's shape, from a seed that differs
    per process (so every process's value differs from every other's), in the leaf's dtype."""
    return [values(tuple(leaf["shape"]), payload["seed"] + 101 * process).astype(leaf["dtype"])
            for leaf in payload["leaves"]]


def local_tree(payload, process: int):
    """The pytree of a step: {"first": leaf 0, "rest": (the other leaves)}, on the host or, where
    ``payload["as"] == "jax"``, each leaf committed to one of this process's devices in turn."""
    leaves = local_leaves(payload, process)
    if payload.get("as") == "jax":
        local = jax.local_devices()
        leaves = [jax.device_put(leaf, local[i % len(local)]) for i, leaf in enumerate(leaves)]
    return {"first": leaves[0], "rest": tuple(leaves[1:])}


def tree_answer(tree) -> dict:
    """A pytree of the step's structure as JSON: its keys, and each leaf's shape, dtype and values."""
    def leaf(v):
        v = np.asarray(v)
        return {"shape": list(v.shape), "dtype": v.dtype.name, "values": v.tolist()}
    return {"type": type(tree).__name__, "keys": sorted(tree) if isinstance(tree, dict) else None,
            "first": leaf(tree["first"]), "rest": [leaf(v) for v in tree["rest"]]}


def broadcast(payload):
    """multihost_utils.broadcast_one_to_all of this process's own tree; with ``source`` given,
    ``is_source=`` is true on that process only."""
    from jax.experimental import multihost_utils
    tree = local_tree(payload, jax.process_index())
    source = payload.get("source")
    if source is None:
        out = multihost_utils.broadcast_one_to_all(tree)
    else:
        out = multihost_utils.broadcast_one_to_all(tree, is_source=jax.process_index() == source)
    return tree_answer(out)


def allgather_local(payload):
    """multihost_utils.process_allgather(tree, tiled=``tiled``) of this process's own tree (host
    values, or fully addressable arrays on local devices)."""
    from jax.experimental import multihost_utils
    tree, tiled = local_tree(payload, jax.process_index()), payload["tiled"]
    if not compat.CONCURRENT_COLLECTIVES_HANG:
        return tree_answer(multihost_utils.process_allgather(tree, tiled=tiled))
    # (where two collectives in flight may hang: one leaf at a time, settling after each)
    out = {}
    for key, leaf in (("first", tree["first"]), *((i, v) for i, v in enumerate(tree["rest"]))):
        out[key] = multihost_utils.process_allgather(leaf, tiled=tiled)
        compat.settle_after_partial_read()
    return tree_answer({"first": out.pop("first"), "rest": tuple(out[i] for i in sorted(out))})


def allgather_global(payload):
    """multihost_utils.process_allgather(array, tiled=``tiled``) of a global array (the payload's
    layout of ``values``): the gathered value, or the error it raised."""
    from jax.experimental import multihost_utils
    shape = tuple(payload["shape"])
    x = values(shape, payload["seed"])
    array = compat.make_array_from_callback(shape, sharding_of(payload), lambda index: x[index], x.dtype)
    try:
        gathered = np.asarray(multihost_utils.process_allgather(array, tiled=payload["tiled"]))
    except Exception as e:  # noqa: BLE001 - which error, if any, is what the property checks
        return {"raised": type(e).__name__, "message": " ".join(str(e).split())[:300]}
    finally:
        compat.settle_after_partial_read()
    return {"gathered": gathered.tolist(), "shape": list(gathered.shape)}


STEPS.update({step.__name__: step for step in (broadcast, allgather_local, allgather_global)})
