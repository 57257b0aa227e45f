"""How the runner's cells are cut into Dask tasks (batches): whole instance
blocks in the interleaved order, else runs of one config's cells."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from harness.measure.tasks import Task

#: A batch stops taking new cells this many seconds after it started.
DEFAULT_SLICE_SECONDS = 2.0
#: Most cells in one batch.
DEFAULT_MAX_BATCH = 64
#: Cut the grid into at least this many batches per measuring slot (load balance).
BATCHES_PER_SLOT = 4
#: Instance blocks (interleaved order): one per batch, unless that makes more than
#: this many batches per slot; then small blocks share a batch.
BLOCK_BATCHES_PER_SLOT = 32


def batch_cells(cells: int, slots: int, max_batch: int = DEFAULT_MAX_BATCH) -> int:
    """Cells per batch: at least BATCHES_PER_SLOT batches per slot, at most
    ``max_batch`` cells each."""
    if cells <= 0:
        return 1
    return max(1, min(max_batch, math.ceil(cells / (max(1, slots) * BATCHES_PER_SLOT))))


def plan_batches(
    tasks: Sequence[Task],
    size: int,
    slots: int,
    priority: Callable[[Task], float] | None = None,
) -> list[list[Task]]:
    """The Dask tasks for these cells. Cells with a block (the runner's interleaved
    order: one instance, every config) go in whole blocks, as one local worker
    runs a block: one block per batch, costliest first by ``priority`` (tiny
    blocks packed: at most BLOCK_BATCHES_PER_SLOT batches per slot). Small
    batches keep the tail short; each costs one scheduler round trip (~15 ms)
    while its worker waits. Other cells: up to ``size`` consecutive cells of one
    set-up."""
    pack = math.ceil(len(tasks) / (max(1, slots) * BLOCK_BATCHES_PER_SLOT))
    blocks: dict[int, list[Task]] = {}
    loose: deque[Task] = deque()
    for task in tasks:
        if task.block is None:
            loose.append(task)
        else:
            blocks.setdefault(task.block, []).append(task)
    ordered = list(blocks.values())
    if priority is not None:
        ordered.sort(key=lambda b: -sum(priority(t) for t in b))
    out: list[list[Task]] = []
    batch: list[Task] = []
    for block in ordered:
        batch += block
        if len(batch) >= pack:
            out.append(batch)
            batch = []
    if batch:
        out.append(batch)
    out += _chunks(loose, size)
    return out


def _chunks(tasks: deque[Task], size: int) -> Iterator[list[Task]]:
    """Batches of ``size`` consecutive tasks of one set-up (config, size, goal)."""
    chunk: list[Task] = []
    while tasks:
        task = tasks.popleft()
        if chunk and (len(chunk) >= size or task.setup_key != chunk[0].setup_key):
            yield chunk
            chunk = []
        chunk.append(task)
    if chunk:
        yield chunk
