"""The JAX side: the only layer that knows JAX's API.

- ``compat``: every difference between JAX versions, decided by feature.
- ``bridge``: model objects to JAX objects (meshes, shardings, pmaps, pictures) and JAX answers
  back into model terms.
"""
