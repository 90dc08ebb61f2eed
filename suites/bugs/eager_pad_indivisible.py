# On 0.9.1-0.9.2 a call on an array sharded over an Auto mesh raises an internal IndivisibleError
# ("shape=[...] is incompatible with mesh_shape=...: dim_size=2 is not divisible by axis_size=N")
# when the compiler lays out a result, or an operand the caller left unplaced (a numpy array), in a
# way the input's mesh cannot name as a PartitionSpec. After compiling, JAX turns the compiler's
# HloShardings back into NamedShardings on the input's mesh (pxla._maybe_get_and_check_in_shardings /
# _maybe_get_and_check_out_shardings -> maybe_recover_user_shardings ->
# _get_out_sharding_from_orig_sharding -> _gspmd_to_named_sharding ->
# sharding_impls.parse_flatten_op_sharding); since 822e9a7c ("Raise an error if indivisible shardings
# is returned by XLA", first in 0.9.1) it re-raises the IndivisibleError instead of keeping the
# compiler's GSPMDSharding as 0.9.0.1 does. Nothing the user asked for is indivisible: the program is
# valid and should return its values.
#   (1) eager jnp.pad(x, ((0, 2),)) of x = [0, 1, 2, 3] sharded P('a') on 4 devices: the compiler
#       lays the [6] result out {devices=[2,2]<=[4] last_tile_dim_replicate}.
#   (2) lax.conv_general_dilated(lhs, rhs, (1,), 'SAME', batch_group_count=2) with lhs int8[16, 2, 4]
#       sharded P('a') on 8 devices and rhs int8[2, 2, 3] a numpy array, eagerly and under jax.jit
#       with rhs an argument: Shardy picks {devices=[2,1,1,4] last_tile_dim_replicate} for the
#       unplaced rhs (its output-feature dimension in 2, one per batch group), which the mesh
#       ('a': 8) cannot name. (rhs closed over, or placed replicated, works.)
# From 0.10.0 the compiler picks replicated layouts for both programs, so the re-raise (still in
# pxla.py in 0.12.0.1) is no longer reached here.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh4 = Mesh(np.array(jax.devices()[:4]), ("a",))
mesh8 = Mesh(np.array(jax.devices()[:8]), ("a",))

# (1) the pad
x = np.arange(4, dtype=np.int32)
pad_expected = np.array([0, 1, 2, 3, 0, 0], np.int32)

# (2) the grouped convolution; numpy reference of XLA's ConvGeneralDilated with batch_group_count=2,
# 'SAME' (pad 1, 1), stride 1: batch group g = lhs[8 g : 8 g + 8] feeds output feature g.
rng = np.random.default_rng(0)
lhs = rng.integers(-128, 128, (16, 2, 4)).astype(np.int8)
rhs = rng.integers(-128, 128, (2, 2, 3)).astype(np.int8)
padded = np.pad(lhs.astype(np.int64), ((0, 0), (0, 0), (1, 1)))
conv_expected = np.zeros((8, 2, 4), np.int64)
for b in range(8):
    for o in range(2):
        for p in range(4):
            conv_expected[b, o, p] = np.sum(padded[o * 8 + b, :, p:p + 3] * rhs[o].astype(np.int64))
conv_expected = conv_expected.astype(np.int32)  # |values| <= 2 * 3 * 128 * 128: no overflow


def conv(lhs_, rhs_):
    return lax.conv_general_dilated(lhs_, rhs_, (1,), "SAME", batch_group_count=2, preferred_element_type=jnp.int32)


xs = jax.device_put(x, NamedSharding(mesh4, P("a")))
ls = jax.device_put(lhs, NamedSharding(mesh8, P("a")))
cases = [
    ("jnp.pad(x, ((0, 2),)), x int32[4] P('a') on 4 devices (eager)", lambda: jnp.pad(xs, ((0, 2),)), pad_expected),
    ("conv_general_dilated(lhs, rhs, batch_group_count=2), lhs int8[16, 2, 4] P('a') on 8 devices, rhs numpy (eager)",
     lambda: conv(ls, rhs), conv_expected),
    ("the same conv under jax.jit, rhs an argument", lambda: jax.jit(conv)(ls, rhs), conv_expected),
]
wrong = 0
for name, call, expected in cases:
    try:
        got = np.asarray(call())
        ok = got.dtype == expected.dtype and np.array_equal(got, expected)
        shown = f"{got.dtype}{list(got.shape)}, equal to the reference: {ok}"
    except Exception as e:  # the finding
        ok = False
        shown = f"{type(e).__name__}: {' '.join(str(e).split())[:220]}"
    print(f"{name}:\n  got:      {shown}")
    if not ok:
        print(f"  expected: {expected.dtype}{list(expected.shape)} equal to the numpy reference")
    wrong += not ok
sys.exit(1 if wrong else 0)
