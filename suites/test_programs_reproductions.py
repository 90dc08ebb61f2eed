"""The smallest reproductions of what the generated programs (``test_programs.py``) found that the
single-operation catalogue does not, one deterministic test each; ``known_deviations.toml`` lists
the versions each one fails on."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conformance.checking.layouts import check_layout
from conformance.checking.repro import scripted_case
from conformance.jaxside import bridge
from conformance.model.layout import Layout

pytestmark = pytest.mark.programs


@bridge.needs_devices(2, "to split over two devices")
def test_the_second_of_two_constraints_in_a_row_applies():
    """jit(lambda x: with_sharding_constraint(with_sharding_constraint(jnp.flip(x), P('a')), P()))
    returns flip(x) replicated, as the last constraint asks (found by the generated-program soak on
    JAX 0.4.38, with -x)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(4, dtype=np.uint32)
    source = ("jax.jit(lambda x: jax.lax.with_sharding_constraint(jax.lax.with_sharding_constraint("
              "jnp.flip(x), NamedSharding(mesh, P('a'))), NamedSharding(mesh, P())))")
    case = scripted_case(f"{source}(x on P())", [f"y = {source}(x)", "print(y.sharding)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ())})
    constrain = jax.lax.with_sharding_constraint
    y = jax.jit(lambda a: constrain(constrain(jnp.flip(a), bridge.named_sharding(mesh, ("a",))),
                                    bridge.named_sharding(mesh, ())))(jax.device_put(x, bridge.named_sharding(mesh, ())))
    check_layout(case, y, Layout(mesh, (), x.shape), x[::-1], what="result")
