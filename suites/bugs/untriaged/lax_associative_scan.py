"""lax.associative_scan(fn, x, reverse=True, axis=-1) raises TypeError: with reverse it hands the
axis to lax.rev before resolving a negative one (control_flow/loops.py, associative_scan:
`elems_flat = [lax.rev(elem, [axis]) ...]` comes before `axis = util.canonicalize_axis(...)`);
reverse=False accepts axis=-1. Not sharding-related. Exits 1 while so."""
import os
os.environ["JAX_PLATFORMS"] = "cpu"
import numpy as np
from jax import lax

x = np.arange(6, dtype=np.int32).reshape(2, 3)
expected = np.flip(np.cumsum(np.flip(x, -1), -1), -1)
print("axis=1 :", lax.associative_scan(lax.add, x, reverse=True, axis=1).tolist(), "expected", expected.tolist())
try:
    got = lax.associative_scan(lax.add, x, reverse=True, axis=-1)
    print("axis=-1:", got.tolist())
    raise SystemExit(0 if np.array_equal(got, expected) else 1)
except TypeError as e:
    print("axis=-1 raised TypeError:", e)
    raise SystemExit(1) from None
