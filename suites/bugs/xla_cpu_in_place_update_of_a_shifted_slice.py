# jax.jit of a cumsum followed by v.at[1:4].set(v[0:3]) returns zeros on CPU: the in-place
# dynamic-update-slice reads elements it has already overwritten.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"  # no sharding: one device shows it
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

x = np.arange(4, dtype=np.uint32)
f = jax.jit(lambda x: (lambda v: v.at[1:4].set(v[0:3]))(jnp.cumsum(-x)))  # shift v right by one
got = np.asarray(f(x))
v = np.cumsum(-x, dtype=np.uint32)  # [0, 4294967295, 4294967293, 4294967290]
expected = v.copy()
expected[1:4] = v[0:3]  # numpy reads v[0:3] before it writes: [0, 0, 4294967295, 4294967293]
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
