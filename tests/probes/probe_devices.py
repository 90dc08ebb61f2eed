"""Run only by tests/test_runner.py, in a subprocess: each pytest process (xdist workers too)
logs what the harness gave it, then checks it. Not collected by `pytest tests/` (its name is not
test_*)."""

import os

import jax
import pytest


@pytest.mark.parametrize("i", range(4))
def test_process_has_the_planned_devices(i, request):
    """This process sees the platform, device count and seed the run asked for."""
    seed = str(request.config.option.hypothesis_seed)
    with open(os.environ["PROBE_LOG"], "a") as log:
        log.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} {jax.local_device_count()} {seed}\n")
    assert jax.devices()[0].platform == "cpu"
    assert jax.local_device_count() == int(os.environ["PROBE_EXPECT_DEVICES"])
    if "PROBE_EXPECT_SEED" in os.environ:
        assert seed == os.environ["PROBE_EXPECT_SEED"]
