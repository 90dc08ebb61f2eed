# pmap(devices=[d0, d1]) of a mapped axis of size 1 runs on d0 alone instead of raising ValueError
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np

devices = jax.devices()[:2]
expected = "ValueError: the size of the mapped axis (1) must equal the number of devices given (2)"
try:
    got = jax.pmap(lambda a: a, devices=devices)(np.zeros((1, 2), np.float32))
except ValueError as e:
    first_line = str(e).partition("\n")[0]
    print("got:      ValueError:", first_line)
    print("expected:", expected)
    sys.exit(0)
print("got:     ", repr(got), "on", sorted(d.id for d in got.sharding.device_set))
print("expected:", expected)
sys.exit(1)
