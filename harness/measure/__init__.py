"""Measurement: the runner (:mod:`.runner`) plans cells and turns results into rows;
the pool (:mod:`.pool`) runs tasks in worker processes (:mod:`.worker`); the judge
(:mod:`.judge`) is the one check of an answer (also used by the gate, ``harness
solve`` and the dataset labeller)."""
