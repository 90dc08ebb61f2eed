"""Run reports and run-to-run comparison for the conformance suite.

This package is where runs become reports a person reads (JSON and HTML per run, ``compare`` and
``matrix`` across runs). It is filled in by the reports issue; today a run's record is pytest's own
output, whose header (see ``conftest.py``) echoes the JAX version, backend, devices and seed.
"""
