"""Measurement: the runner (:mod:`.runner`) plans cells and turns results into rows;
the pool (:mod:`.pool`) runs tasks in worker processes (:mod:`.worker`)."""
