"""How a failure speaks: the assertion context (``case``), layout checks (``layouts``),
stand-alone reproduction scripts (``repro``) and subprocess isolation (``isolation``)."""
