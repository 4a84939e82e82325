"""A module a test needs: skipped where it is missing, unless the environment variable
that asks for it is "1" (then the missing module fails the test, so that a pass proves
the test ran)."""

import importlib
import os
from typing import Any

import pytest


def required(name: str, flag: str) -> Any:
    """Module `name`, or a skip where it is not installed and `flag` is not set to 1."""
    if os.environ.get(flag) == "1":
        return importlib.import_module(name)
    return pytest.importorskip(name)
