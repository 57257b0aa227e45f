"""Paths the tests share: the checkout, the tests folder, its data and plugins
(tests sit in sub-folders that mirror the package, so none counts ``parents``)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
PLUGINS = TESTS / "plugins"
