"""The dependencies only some commands need, installed as extras (python/pyproject.toml):
a command that needs one it cannot import says which to install, in one line (exit 2).
``make setup`` installs every extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from mwperf.errors import UsageError

__all__ = ["need", "EXTRAS"]

#: module -> (the extra that installs it, what needs it)
EXTRAS = {
    "psycopg": ("postgresql", "a results store on a PostgreSQL server"),
    "kaleido": ("figures", "figure files (SVG, PNG)"),
    "pyarrow": ("parquet", "Parquet files"),
    "ansible": ("lab", "a lab of hosts prepared through Ansible (--inventory)"),
}


def need(module: str, option: str, value: str | None) -> ModuleType:
    """``module`` imported; UsageError naming ``option`` (and ``value``) and the extra to install when it is not."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra, what = EXTRAS[module]
        raise UsageError(option, value, f"{what} need {module}, which is not installed: install the extra "
                                        f"'{extra}' (pip install -e 'python[{extra}]' in the mwperf tree; make "
                                        "setup installs every extra)") from None
