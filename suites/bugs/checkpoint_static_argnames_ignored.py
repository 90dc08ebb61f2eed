# jax.checkpoint(f, static_argnames=('k',)) (a keyword of jax.checkpoint's signature from 0.10.2, beside
# static_argnums) traces k anyway: under jax.grad, f(v, k=2) with `if k > 1` in its body raises
# TracerBoolConversionError ("... depends on the value of the argument k"), where the same function with
# static_argnums=(1,) and k passed by position returns [2., 2., ...]. The parameter is honoured only
# under the experimental config flag jax_remat3 (default False): the default path (ad_checkpoint.py
# checkpoint -> fun_remat) hands static_argnums to _remat_static_argnums and drops static_argnames.
# checkpoint's docstring says of static_argnums "which argument values on which to specialize for
# tracing ... Specifying arguments as static can avoid ConcretizationTypeErrors when tracing", and
# static_argnames is its by-name counterpart, as in jax.jit; an accepted keyword should not be
# silently ignored. On a release whose jax.checkpoint has no static_argnames the bug is not there.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import numpy as np

if "static_argnames" not in inspect.signature(jax.checkpoint).parameters:
    print("this JAX: jax.checkpoint has no static_argnames parameter (the bug is not there)")
    sys.exit(0)

seen = []


def f(v, k):
    seen.append(type(k).__name__)
    return v * k if k > 1 else v  # Python control flow on k: k must be static


x = np.arange(4, dtype=np.float32)
expected = np.asarray(jax.grad(lambda v: jax.checkpoint(f, static_argnums=(1,))(v, 2).sum())(x)).tolist()
seen.clear()
try:
    got = np.asarray(jax.grad(lambda v: jax.checkpoint(f, static_argnames=("k",))(v, k=2).sum())(x)).tolist()
except Exception as e:
    got = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
print("expected:", expected, "| k seen as ['int'] (as with static_argnums=(1,))")
print("got:     ", got, "| k seen as", seen)
sys.exit(0 if got == expected == [2.0] * 4 and seen == ["int"] else 1)
