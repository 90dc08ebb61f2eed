"""How a run happens: the pytest plugin (``plugin``, listed by the root ``conftest.py``; its part that
needs JAX is ``session``) and what it uses: suite areas and their order (``areas``), device
planning (``devices``), Hypothesis profiles and the seed (``profiles``), known deviations
(``deviations``), what a run keeps in pytest's stash (``state``), compilation counting
(``compilations``), the run folder (``run_folder``), every ``CONFORMANCE_*`` environment name
(``environment``), pytest in a subprocess (``pytest_process``), the hooks other plugins implement
(``hookspecs``), and multi-process runs (``multiprocess``)."""
