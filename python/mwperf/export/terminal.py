"""Tables for the terminal, drawn by rich: aligned columns under a rule,
colour on a terminal only, never wrapped or cut (a table wider than the
terminal scrolls rather than loses digits), no trailing blanks.

Every text table mwperf prints (results, headline, ``compare``, ``ls``)
goes through :func:`table_text`, so they look alike.
"""

from __future__ import annotations

import io
from typing import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from mwperf.display import printable

__all__ = ["table_text", "RULE"]

#: A header, a rule of dashes under it, no frame: what Perftest's tables look like.
RULE = box.Box("    \n"
               "    \n"
               " -  \n"
               "    \n"
               "    \n"
               "    \n"
               "    \n"
               "    \n", ascii=True)


def table_text(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (),
               styles: dict[int, str] | None = None) -> str:
    """``rows`` under ``headers``, right-aligned but for the column indexes in
    ``left``; plain text (rich renders it, then the lines are stripped)."""
    table = Table(box=RULE, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), collapse_padding=True,
                  header_style=None, show_header=True)
    for i, header in enumerate(headers):
        table.add_column(header, justify="left" if i in left else "right", no_wrap=True,
                         style=(styles or {}).get(i))
    for row in rows:
        table.add_row(*(printable(cell) for cell in row))  # a cell from a run directory cannot drive the terminal
    buffer = io.StringIO()
    Console(file=buffer, width=100_000, no_color=True, highlight=False, soft_wrap=False, emoji=False,
            markup=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"
