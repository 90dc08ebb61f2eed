"""Does this JAX's persistent compilation cache keep the training-step property right on CPU? Runs
suites/test_training.py::test_training_step_under_a_parallelism_layout (seed 1198186503) three times
on one fresh cache folder, in the checkout $CHECKOUT (default: the current folder); exit 1 if a run
fails (the property passes without the cache on every release). A measuring script for the releases
(not collected by pytest): CHECKOUT=<a checkout whose compat.PERSISTENT_CACHE_ON_CPU is True>
python -m conformance.runner.release_envs run tests/probes/cache_keeps_the_training_step_right.py.
Measured 2026-12-05: aborts or crashes on 0.4.30-0.5.3, passes from 0.6.0 (compat)."""
import os
import subprocess
import sys
import tempfile
with tempfile.TemporaryDirectory() as d:
    outs = []
    for i in range(3):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "suites/test_training.py::test_training_step_under_a_parallelism_layout",
                            "--hypothesis-seed=1198186503", "--compilation-cache", os.path.join(d, "cache"),
                            "--report-dir", os.path.join(d, f"r{i}")],
                           cwd=os.environ.get("CHECKOUT", os.getcwd()), capture_output=True, text=True)
        outs.append(r.returncode)
    import jax
    print(jax.__version__, "exit statuses of three cached runs:", outs)
    sys.exit(0 if outs == [0, 0, 0] else 1)
