# pmap(out_axes=None) of a value that differs across devices silently returns device 0's value
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np

x = np.arange(2)  # device 0 holds 0, device 1 holds 1
expected = "ValueError, as jax.vmap(lambda a: a, out_axes=None)(x) raises: the output is mapped"
try:
    got = jax.pmap(lambda a: a, out_axes=None)(x)
except ValueError as e:
    first_line = str(e).partition("\n")[0]
    print("got:      ValueError:", first_line)
    print("expected:", expected)
    sys.exit(0)
print("got:     ", repr(got), "(device 0's value; device 1's was 1)")
print("expected:", expected)
sys.exit(1)
