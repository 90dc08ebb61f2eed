"""Multi-process runs, in three modules that import one way: ``launcher`` (starts the copies and
watches them; no JAX), ``protocol`` (the leader/follower step exchange over JAX's coordination
service) and ``steps`` (what every process runs for each step). The plugin hands ``steps.STEPS``
to the protocol."""
