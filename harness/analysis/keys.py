"""The columns rows are grouped by in the analysis. A *cell* is one config on one
instance (:class:`harness.measure.plan.Cell`); the groups here are larger."""

#: The rows of one dataset in one run.
GROUP = ["run_id", "dataset"]
#: One config's rows on one dataset of one run: a group of cells.
CONFIG_GROUP = [*GROUP, "config"]
#: One cell of one run (a config on an instance).
INSTANCE = [*CONFIG_GROUP, "instance"]
