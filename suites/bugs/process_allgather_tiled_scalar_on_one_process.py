# multihost_utils.process_allgather(scalar, tiled=True) on one process returns the scalar (shape ()),
# where its docstring says a scalar is stacked and several processes get shape (process_count,):
# with one process the answer should have shape (1,).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.experimental import multihost_utils

got = np.shape(multihost_utils.process_allgather(np.int32(7), tiled=True))
print(f"{jax.process_count()} process: process_allgather(np.int32(7), tiled=True).shape: got {got}, expected (1,)")
sys.exit(0 if got == (1,) else 1)
