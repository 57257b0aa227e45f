"""Which pending task a free worker of the local pool takes next.

Tasks of one block run in one worker, in submission order; a worker that finishes
its block takes the free block (one no worker has begun) whose tasks are expected
to take longest, by a priority the runner asks afresh as its cost model learns.
With a priority, a task without a block is a block of its own.

A hand-off must not cost the number of pending tasks: asked at every hand-off,
that made a 5,000-cell run spend 138 s of parent CPU (3.1 M priority calls for
1,250 cells). Blocks are therefore filed by their *signature*, the classes of
their tasks (``key``: tasks of one class have one priority, e.g. one cost-model
workload), and a hand-off asks the priority once per class and sums it once per
signature. A 3x3 dataset has about 32 signatures per config set, whatever its size.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from harness.measure.tasks import Task

Priority = Callable[[Task], float]
#: Tasks with equal keys have equal priority.
ClassKey = Callable[[Task], Hashable]


def _task_id(task: Task) -> Hashable:
    return task.id


class Handout:
    """The pool's pending tasks, and the choice of the next one for a worker."""

    def __init__(self) -> None:
        self._priority: Priority | None = None
        self._key: ClassKey = _task_id
        self._token: Callable[[], Hashable | None] | None = None
        #: class -> priority and signature -> their sum, as of token _asked_at
        self._asked: dict[Hashable, float] = {}
        self._totals: dict[tuple, float] = {}
        self._asked_at: Hashable | None = None
        #: every block with tasks left, begun or free, in submission order
        self._blocks: dict[Hashable, deque[Task]] = {}
        #: free blocks: their signature, and per signature a heap of (seq, block)
        #: (entries of blocks that moved or began are skipped when met)
        self._where: dict[Hashable, tuple] = {}
        self._filed: dict[tuple, list[tuple[int, Hashable]]] = {}
        self._seq: dict[Hashable, int] = {}
        self._count = itertools.count()
        self._rep: dict[Hashable, Task] = {}  # one task of each class
        #: without a priority, tasks without a block queue by set-up
        self._queues: dict[tuple, deque[Task]] = {}

    def __len__(self) -> int:
        return sum(len(q) for q in self._blocks.values()) + sum(
            len(q) for q in self._queues.values()
        )

    def prioritize(
        self,
        priority: Priority,
        key: ClassKey | None = None,
        token: Callable[[], Hashable | None] | None = None,
    ) -> None:
        """From now on, hand out the free block of highest summed priority;
        ``key``: tasks with equal keys have equal priority (default: none do);
        ``token``: while it returns the same value (not None), the priorities
        asked at the last hand-off still hold and are not asked again."""
        self._priority, self._key, self._token = priority, key or _task_id, token
        self._asked, self._totals, self._asked_at = {}, {}, None
        queued = [t for q in self._queues.values() for t in q]
        self._queues.clear()
        for task in queued:
            self.add(task)
        self._rep.clear()
        for block in list(self._where):
            self._file(block)

    def add(self, task: Task) -> None:
        if task.block is None and self._priority is None:
            self._queues.setdefault(task.setup_key, deque()).append(task)
            return
        block = task.block if task.block is not None else ("task", task.id)
        queue = self._blocks.get(block)
        if queue is None:
            queue = self._blocks[block] = deque()
            self._seq[block] = next(self._count)
            self._where[block] = ()
        queue.append(task)
        if block in self._where:
            self._file(block)

    def take(
        self, block: Hashable | None, prepared: set
    ) -> tuple[Task | None, Hashable | None]:
        """The next task for a worker holding ``block`` (None: none), and the block
        it holds then: the rest of its own block first; else the free block of
        highest priority (a block whose first task the worker has ``prepared``
        for breaks ties, then the oldest); else, without a priority, a blockless
        task it has prepared for, else the oldest."""
        if block is not None:
            queue = self._blocks.get(block)
            if queue:
                return queue.popleft(), block
            self._drop(block)
        chosen = self._best_free(prepared)
        if chosen is not None:
            del self._where[chosen]
            return self._blocks[chosen].popleft(), chosen
        for key in prepared:
            queue = self._queues.get(key)
            if queue:
                return queue.popleft(), None
        for key, queue in list(self._queues.items()):
            if queue:
                return queue.popleft(), None
            del self._queues[key]
        return None, None

    def withdraw(self) -> list[Task]:
        """Remove and return every task no worker has begun: queued ones, then the
        free blocks in submission order (begun blocks stay)."""
        out = [t for q in self._queues.values() for t in q]
        self._queues.clear()
        for block in [b for b in self._blocks if b in self._where]:
            out.extend(self._blocks[block])
            self._drop(block)
        self._filed.clear()
        return out

    def clear(self) -> None:
        self.__init__()

    # ---- internals

    def _drop(self, block: Hashable) -> None:
        self._blocks.pop(block, None)
        self._where.pop(block, None)
        self._seq.pop(block, None)

    def _file(self, block: Hashable) -> None:
        """(Re)file a free block under the signature of its tasks."""
        if self._priority is None:
            sig: tuple = ()
        else:
            sig = tuple(self._class(t) for t in self._blocks[block])
        self._where[block] = sig
        heapq.heappush(self._filed.setdefault(sig, []), (self._seq[block], block))

    def _class(self, task: Task) -> Hashable:
        key = (self._key(task), task.setup_key)
        self._rep.setdefault(key, task)
        return key

    def _oldest(self, sig: tuple) -> tuple[int, Hashable] | None:
        """The oldest free block filed under ``sig``, dropping stale entries."""
        heap = self._filed[sig]
        while heap and self._where.get(heap[0][1]) != sig:
            heapq.heappop(heap)
        if not heap:
            del self._filed[sig]
            return None
        return heap[0]

    def _best_free(self, prepared: set) -> Hashable | None:
        now = self._token() if self._token is not None else None
        if now is None or now != self._asked_at:
            self._asked, self._totals = {}, {}
        asked, totals = self._asked, self._totals

        def total(sig: tuple) -> float:
            if sig not in totals:
                for cls in sig:
                    if cls not in asked:
                        asked[cls] = self._priority(self._rep[cls])
                totals[sig] = sum(asked[cls] for cls in sig)
            return totals[sig]

        best, best_value = None, None
        for sig in list(self._filed):
            top = self._oldest(sig)
            if top is None:
                continue
            seq, block = top
            if self._priority is None:
                v: tuple[Any, ...] = (-seq,)
            else:
                v = (total(sig), bool(sig) and sig[0][1] in prepared, -seq)
            if best_value is None or v > best_value:
                best, best_value = block, v
        if self._token is not None:
            self._asked_at = self._token()
        return best
