"""Datasets: reproducible sets of puzzle instances, stored as JSON Lines files.

- :mod:`.model`: ``Instance``, ``Dataset``, ``DatasetError``, names, the summary;
- :mod:`.jsonl`: the file format (``dumps_dataset``, ``save_dataset``,
  ``parse_dataset``), validated on load;
- :mod:`.generators`: the seeded generators and ``generate``;
- :mod:`.labels`: optimal lengths from the oracle or an optimal solver;
- :mod:`.catalogue`: the committed datasets' recipes, the search path,
  ``load_dataset`` and ``select_datasets``.
"""

from __future__ import annotations

from harness.datasets.catalogue import (
    RECIPES,
    build,
    dataset_dirs,
    dataset_names,
    find_dataset,
    list_datasets,
    load_dataset,
    regenerate,
    repo_datasets_dir,
    select_datasets,
)
from harness.datasets.generators import (
    GENERATORS,
    IMPORTERS,
    BitStream,
    Drawn,
    GeneratorInfo,
    all_generators,
    depth_strata_boards,
    format_depths,
    generate,
    generate_command,
    parse_depths,
    register_generator,
    random_permutation,
    random_walk_boards,
    uniform_board,
    uniform_boards,
)
from harness.datasets.jsonl import (  # noqa: I001
    dumps_dataset,
    make_dataset,
    parse_dataset,
    save_dataset,
)
from harness.datasets.labels import (
    Labeller,
    make_labeller,
    oracle_labeller,
    resolve_label,
    solver_labeller,
)
from harness.datasets.model import (
    FORMAT,
    FORMAT_VERSION,
    ORACLE_MAX_SQUARES,
    SELECTIONS,
    Dataset,
    DatasetError,
    Instance,
    summarize,
)

__all__ = [
    "FORMAT", "FORMAT_VERSION", "GENERATORS", "IMPORTERS", "ORACLE_MAX_SQUARES",
    "RECIPES", "SELECTIONS", "BitStream", "Dataset", "DatasetError", "Drawn",
    "GeneratorInfo", "Instance", "all_generators", "register_generator",
    "Labeller", "build", "dataset_dirs", "dataset_names", "depth_strata_boards",
    "dumps_dataset", "find_dataset", "format_depths", "generate", "generate_command",
    "list_datasets", "load_dataset", "make_dataset", "make_labeller", "oracle_labeller",
    "parse_dataset", "parse_depths", "random_permutation", "random_walk_boards",
    "regenerate", "repo_datasets_dir", "resolve_label", "save_dataset",
    "select_datasets", "solver_labeller", "summarize", "uniform_board",
    "uniform_boards",
]
