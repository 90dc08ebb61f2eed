"""How a failure speaks: the assertion context (``case``), layout checks (``layouts``),
stand-alone reproduction scripts (``repro``), subprocess isolation (``isolation``), and what a
known deviation's entry is matched against: its symptom (``symptoms``) and, for a random property,
its trigger on the drawn example (``triggers``)."""
