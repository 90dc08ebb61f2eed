"""How a run happens: the pytest plugin (``plugin``, listed by the root ``conftest.py``) and what it
uses: suite areas and their order (``areas``), device planning (``devices``), Hypothesis profiles
and the seed (``profiles``), known deviations (``deviations``), compilation counting
(``compilations``), the run folder (``run_folder``), every ``CONFORMANCE_*`` environment name
(``environment``), pytest in a subprocess (``pytest_process``), and multi-process runs
(``multiprocess``)."""
