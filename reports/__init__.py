"""Run reports and run-to-run comparison for the conformance suite.

- ``plugin.py``: the pytest side; every ``pytest suites/`` run writes ``report.json`` (format:
  ``schema.json``, read back by ``record.load``) and ``report.html`` into its run folder.
- ``compare.py``, ``html.py``: what changed between two runs; a run's page and the matrix of
  properties x runs.
- ``python -m reports compare|matrix|html``: the command line (``__main__.py``).
"""
