# pmap with a negative in_axes or out_axes maps the wrong axis: out_axes=-1 stacks the results along
# axis 0, and in_axes=-1 fails inside with an unrelated ValueError from squeeze.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import re
import sys

import jax
import numpy as np

x = np.arange(4).reshape(2, 2)
# Counting from the end, as numpy and jax.vmap do, both calls give x.T; pmap's docstring asks for
# non-negative axes, so a ValueError that says so (names in_axes/out_axes) would be right too.
expected = x.T.tolist()
wrong = 0
for axes in ({"in_axes": -1}, {"out_axes": -1}):
    try:
        got = np.asarray(jax.pmap(lambda a: a, **axes)(x)).tolist()
        right = got == expected
    except Exception as e:
        got = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        right = isinstance(e, ValueError) and re.search(r"in_axes|out_axes|negative", str(e)) is not None
    print(f"pmap(lambda a: a, {', '.join(f'{k}={v}' for k, v in axes.items())})(x)")
    print("  got:     ", got)
    print("  expected:", expected, "(or a ValueError naming the negative axis)")
    wrong += not right
sys.exit(1 if wrong else 0)
