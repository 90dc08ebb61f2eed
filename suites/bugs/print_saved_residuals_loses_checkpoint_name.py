# print_saved_residuals reports a residual saved because it is named (checkpoint_name) as "output of
# reduce_precision", not by its name.
import contextlib
import io
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np


def f(x, w, v):
    d = x @ w
    s = jax.ad_checkpoint.checkpoint_name(jnp.sin(d), "s")
    return jnp.sum(jnp.sin(jnp.einsum("ij,ij->i", s, v)))


x, w, v = np.ones((1, 1), np.float32), np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    jax.ad_checkpoint.print_saved_residuals(
        jax.checkpoint(f, policy=jax.checkpoint_policies.save_only_these_names("s")), x, w, v)
computed = [line.split(" from")[0] for line in printed.getvalue().splitlines() if "from the argument" not in line]
print("got:     ", computed)
print("expected:", ["f32[1,1] named 's'"])
sys.exit(0 if computed == ["f32[1,1] named 's'"] else 1)
