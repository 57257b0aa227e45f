"""Instructions per solve, counted under valgrind's callgrind (``harness run
--instructions``): a deterministic cost beside time, blind to what time sees of
the memory system (cache misses, branch mispredictions).

``shim`` (the C client requests, built on first use, and the counter), ``model``
(a count and its limits), ``child`` (the counting process, under valgrind),
``phase`` (the parent side: one counting process per config before the timed
cells), ``live`` (its running processes, killed on Ctrl-C), ``external``
(external programs under callgrind, less the goal board).
"""
