"""The suite's library, in layers; a layer imports only from the layers above it in this list
(``tests/test_layers.py`` checks it):

- ``conformance.model``: the reference model, pure Python/numpy (no JAX, no pytest).
- ``strategies`` (top level): Hypothesis strategies that draw model objects.
- ``conformance.jaxside``: the only code that knows JAX's API: version differences (``compat``)
  and model objects to JAX objects and back (``bridge``).
- ``conformance.checking``: how a failure speaks: the assertion context, layout checks,
  reproduction scripts, subprocess isolation.
- ``conformance.runner``: how a run happens: device planning, the pytest plugin, the
  ``CONFORMANCE_*`` environment, known deviations, multi-process runs.
- ``reports`` (top level): run reports, written during a run and read afterwards.
- ``suites`` (top level): the properties.
"""
