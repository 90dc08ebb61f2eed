"""The suite's plugins and its command-line options. Every pytest process (xdist workers too) loads
them before JAX starts its backend; what they do is in ``conformance/runner/plugin.py`` (devices,
backend, seed, deviations, ordering, fixtures) and ``reports/plugin.py`` (the run report)."""

from conformance.runner import environment
from conformance.runner.devices import DEFAULT_CPU_DEVICES

pytest_plugins = ["conformance.runner.plugin", "reports.plugin"]


def pytest_addoption(parser):
    group = parser.getgroup("jax conformance")
    group.addoption("--devices", default=None, metavar="N",
                    help=f"CPU devices to force (default ${environment.DEVICES} or "
                         f"{DEFAULT_CPU_DEVICES}); not allowed on GPU/TPU, which use the "
                         f"devices present")
    group.addoption("--backend", default=None, metavar="PLATFORM",
                    help="JAX platform to test: cpu (default), cuda, rocm, tpu; sets JAX_PLATFORMS")
    group.addoption("--x64", action="store_true", default=False,
                    help="enable 64-bit types (jax_enable_x64); adds int64/float64/... to the dtypes")
    group.addoption("--processes", default=None, metavar="N",
                    help="run the multi-process suite over N local processes (each with --devices "
                         "CPU devices), coordinated by jax.distributed on 127.0.0.1; 'platform' "
                         "when a pod or cluster launcher started this command on every host")
    group.addoption("--known-deviations", default=None, metavar="FILE",
                    help="the suite's known-deviation list, replaced (default "
                         "suites/known_deviations.toml)")
    group.addoption("--deviations", action="append", default=[], metavar="FILE",
                    help="also apply the known deviations of FILE (your own, in the same TOML format; "
                         "an entry may name a backend: cpu, gpu, tpu or a device kind); repeatable")
    group.addoption("--soak-minutes", default=10.0, type=float, metavar="MINUTES",
                    help="how long the generated-program soak runs under --hypothesis-profile=soak "
                         "(default 10)")
    group.addoption("--compilation-cache", default=None, metavar="DIR",
                    help="keep and serve compiled programs in DIR (JAX's persistent compilation cache; "
                         f"default ${environment.COMPILATION_CACHE} or a folder per JAX release under "
                         "~/.cache/jax-conformance/compilation-cache)")
    group.addoption("--no-compilation-cache", action="store_true", default=False,
                    help="compile every program; use no persistent compilation cache")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="where a run of suites/ writes report.json and report.html (default "
                         f"${environment.REPORT_DIR} or reports/runs/<time>-jax-<version>-<backend>)")
