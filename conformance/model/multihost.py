"""Reference model of ``jax.experimental.multihost_utils`` and process-local assembly over P
processes, in numpy (no JAX): what each process gets back, given every process's own values.

Vocabulary:

- ``per_process[p]`` is process ``p``'s own value (a list of leaves, or one array);
- **stacked**: the processes' values along a new leading axis, in process order;
- **tiled**: concatenated along axis 0, in process order (a rank-0 leaf is stacked instead: it
  has no axis 0 to join along).

The rules, from each function's docstring (JAX 0.4.30 to 0.12.0.1):

- ``process_allgather(x, tiled)`` of per-process (host or fully addressable) values gives every
  process the stacked values (``tiled=False``) or the tiled ones (``tiled=True``); of a global
  array, its whole value (``tiled=True``);
- ``broadcast_one_to_all(x, is_source)`` gives every process the source's value (process 0 unless
  ``is_source`` says otherwise);
- ``host_local_array_to_global_array(local, mesh, pspec)``: the processes' local rows, tiled along
  every dimension the pspec cuts over process-spanning axes, form the global array; with one
  process the local value is the global value, and ``global_array_to_host_local_array`` gives it
  back;
- ``make_array_from_process_local_data(sharding, local, global_shape)``: the same assembly, the
  global shape inferred when not given.

With one process every rule reduces to: the value itself, stacked once (``x[None]``) where
``tiled=False``.
"""

from __future__ import annotations

from typing import List, Mapping, Sequence

import numpy as np


def gathered(per_process: Sequence[Sequence[np.ndarray]], tiled: bool) -> List[np.ndarray]:
    """process_allgather of per-process leaves: leaf ``i`` of every process, stacked (``tiled=False``,
    or a rank-0 leaf) or tiled, in process order."""
    def join(leaves):
        return np.stack(leaves) if not tiled or np.ndim(leaves[0]) == 0 else np.concatenate(leaves)
    return [join([np.asarray(leaves[i]) for leaves in per_process]) for i in range(len(per_process[0]))]


def broadcast(per_process: Sequence[Sequence[np.ndarray]], source: int = 0) -> List[np.ndarray]:
    """broadcast_one_to_all: the source process's leaves, on every process."""
    return [np.asarray(leaf) for leaf in per_process[source]]


def addressable(device_ids, owner: Mapping[int, int], process: int) -> frozenset:
    """The devices of ``device_ids`` that ``process`` addresses: those it owns (``owner``: device
    id -> process index; with one process, every device)."""
    return frozenset(d for d in device_ids if owner.get(d, 0) == process)
