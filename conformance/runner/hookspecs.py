"""Hooks the runner calls and other plugins implement (registered by ``conformance.runner.plugin``)."""


def pytest_conformance_run_broken(run_folder, message):
    """A multi-process run broke (a process died, or a step got stuck): the launcher, which runs no
    tests itself, tells the plugins that keep records of the run in ``run_folder`` (the run report
    marks the property that was running as failed with ``message``)."""
