# With check_vma=True, lax.psum over ('i', 'j') of a shard_map value that varies over 'j' and is
# invariant over 'i' raises ValueError instead of summing.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]).reshape(1, 2), ("i", "j"))
x = np.arange(2, dtype=np.int32)
# Device j holds the block x[j:j+1] (varying over 'j', invariant over 'i'); psum over ('i', 'j')
# adds the two 'j' blocks and, like any psum, counts each 'i' copy (one here).
expected = x[:1] + x[1:]

# psum over 'i' alone of the same value is accepted, and with check_vma=False this program
# returns `expected`.
f = jax.jit(jax.shard_map(lambda b: lax.psum(b, ("i", "j")), mesh=mesh,
                          in_specs=P("j"), out_specs=P(), check_vma=True))
try:
    got = f(x)
except Exception as e:
    print(f"got:      {type(e).__name__}: {str(e).splitlines()[0]}")
    print("expected:", expected.tolist())
    sys.exit(1)
print("got:     ", np.asarray(got).tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
