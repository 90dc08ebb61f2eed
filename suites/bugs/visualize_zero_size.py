# jax.debug.visualize_array_sharding raises ZeroDivisionError on a zero-size array
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np

arrays = {
    "(0,)": jax.device_put(np.zeros((0,), np.float32)),
    "(0, 2)": jax.device_put(np.zeros((0, 2), np.float32)),
}
failed = False
for name, y in arrays.items():
    try:
        jax.debug.visualize_array_sharding(y, use_color=False)
    except ZeroDivisionError as e:
        print(f"got:      {name}: ZeroDivisionError: {e}")
        failed = True
print("expected: a drawing of each array's sharding (as for a (1,) or (1, 2) array), no exception")
sys.exit(1 if failed else 0)
