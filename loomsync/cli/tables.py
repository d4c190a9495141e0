"""Tables that read at any width (issue 16, item 1): the one layout every table command uses,
through :func:`loomsync.cli.render.print_table`.

A table is a list of :class:`Column` specs (header, how to get the cell from a row, whether it
may be shortened) and the rows. It is printed one of two ways:

- **At a terminal** (:func:`fitted`): one line per row, never wrapped. Columns that are not
  ``shrink`` (ids, states, counts, times) keep their whole width; ``shrink`` columns (titles,
  branches, workspaces, errors) share what is left and end in ``…`` when cut, never below
  their ``min_width``. When even those minimums do not fit, the columns with a ``drop`` rank
  are left out, highest rank first, and then the ``shrink`` columns go below their minimum;
  a column without a rank (``LAST ERROR``, the ids, states) is never left out, and a whole
  one is never cut while that helps (issue 16 review item 1).
- **Piped** (:func:`tsv`): a header line, then one line per row, tab-separated, nothing cut,
  no colour, for ``cut -f`` and ``awk -F'\\t'``. Every cell is made printable
  (:func:`loomsync.terminal.printable`), so a tab or newline inside a title is written ``\\t``
  or ``\\n`` and never splits a field or a row.

Adding a column is one :class:`Column` in the caller's list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from rich.cells import cell_len
from rich.console import Group
from rich.text import Text

from loomsync.terminal import clip, printable

Row = TypeVar("Row")
#: Spaces between two columns at a terminal.
GAP = 2


@dataclass(frozen=True)
class Column(Generic[Row]):
    """One column of a table.

    Attributes:
        header: its title (``ID``, ``LAST ERROR``).
        cell: the row's cell as raw text (made printable by the table; ``-`` for nothing).
        shrink: at a terminal, cut with ``…`` to fit (titles, branches, errors); otherwise the
            cell is always shown whole.
        min_width: the fewest cells a ``shrink`` column is given (the header's length when
            larger than the widest cell is not needed).
        drop: left out at a terminal too narrow for every column at its minimum, the highest
            rank first; 0: never left out.
        weight: a ``shrink`` column's share of the room left (a title 3, a branch 1).
        terminal: the cell at a terminal when it differs (a short id); None: ``cell``.
        style: the cell's rich style, fixed or per row (``failed`` in red).
        justify: ``left`` or ``right`` (counts).
    """

    header: str
    cell: Callable[[Row], str]
    shrink: bool = False
    min_width: int = 8
    drop: int = 0
    weight: int = 1
    terminal: Callable[[Row], str] | None = None
    style: str | Callable[[Row], str] = ""
    justify: Literal["left", "right"] = "left"

    def raw(self, row: Row, *, at_terminal: bool) -> str:
        """The cell of ``row`` as raw text, in its terminal form when ``at_terminal``."""
        get = self.terminal if at_terminal and self.terminal is not None else self.cell
        return get(row)

    def text(self, row: Row, *, at_terminal: bool) -> str:
        """The cell of ``row``, printable, in its terminal form when ``at_terminal``."""
        return printable(self.raw(row, at_terminal=at_terminal))

    def style_of(self, row: Row) -> str:
        """The rich style of ``row``'s cell."""
        return self.style(row) if callable(self.style) else self.style


def tsv(columns: Sequence[Column[Row]], rows: Sequence[Row]) -> str:
    """The table as tab-separated lines: the headers, then one line per row; each line ends
    with a newline. Nothing is cut; every cell is printable and holds no tab or newline."""
    lines = ["\t".join(printable(column.header) for column in columns)]
    lines += ["\t".join(c.text(row, at_terminal=False) for c in columns) for row in rows]
    return "".join(line + "\n" for line in lines)


#: The fewest cells a ``shrink`` column is cut to: one character and ``…``.
FLOOR = 2


def widths(
    columns: Sequence[Column[Row]], cells: Sequence[Sequence[str]], width: int
) -> list[int | None]:
    """Per column, its width at a terminal ``width`` cells wide, or None when it is left out.

    ``cells`` are the printable terminal cells, one list per row. Whole columns (ids, states,
    counts, times) take their widest cell (or header) and are never cut; ``shrink`` columns get
    their minimum, then what is left, shared in proportion to their ``weight`` (none past its
    widest cell). Too narrow for every column at its minimum (issue 16 item 1, below 80
    columns): the ``drop`` columns are left out, highest rank first, until the rest fit; then
    the ``shrink`` columns go below their minimum, down to :data:`FLOOR` cells (one character
    and ``…``). When even that is wider than ``width`` (whole ids and states alone do not fit),
    the columns keep those widths: the line is longer than the terminal, never wrapped by us
    and never with an id or state cut (docs/client.md, "Tables").
    """
    natural = [
        max([cell_len(c.header), *(cell_len(row[i]) for row in cells)])
        for i, c in enumerate(columns)
    ]
    least = [
        min(natural[i], c.min_width) if c.shrink else natural[i] for i, c in enumerate(columns)
    ]
    shown = list(range(len(columns)))

    def needed() -> int:
        return sum(least[i] for i in shown) + GAP * (len(shown) - 1)

    for i in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop):
        if needed() <= width:
            break
        shown.remove(i)
    # still too wide: the shrink columns go below their minimum, the widest first, down to
    # one character and "…"; a whole column (an id, a state) never loses a cell
    for _ in range(max(needed() - width, 0)):
        thin = [i for i in shown if columns[i].shrink and least[i] > min(natural[i], FLOOR)]
        if not thin:
            break
        least[max(thin, key=lambda i: least[i])] -= 1
    given = {i: least[i] for i in shown}
    spare = width - needed()
    growing = [i for i in shown if columns[i].shrink]
    for _ in range(max(spare, 0)):  # one cell at a time, to the column most owed it
        short = [i for i in growing if given[i] < natural[i]]
        if not short:
            break
        best = max(short, key=lambda i: columns[i].weight / (given[i] - least[i] + 1))
        given[best] += 1
    return [given.get(i) for i in range(len(columns))]


def cut(text: str, width: int) -> str:
    """Raw ``text`` made printable and, when longer, cut to at most ``width`` cells ending in
    ``…`` by :func:`loomsync.terminal.clip` (never half a visible escape such as ``\\x1b``);
    wide characters count two cells."""
    shown = printable(text)
    if cell_len(shown) <= width:
        return shown
    limit = width - 1
    while limit > 0:
        clipped = printable(clip(text, limit))
        over = cell_len(clipped) - width
        if over <= 0:
            return clipped
        limit -= max(1, over // 2)  # a wide character is two cells
    return "…"


def _line(cells: Sequence[tuple[str, int, str, str]]) -> Text:
    """One table line: each ``(text, width, style, justify)`` cell padded to its width, the
    cells ``GAP`` apart, no padding after the last."""
    line = Text(no_wrap=True, overflow="ignore", end="\n")
    for n, (text, size, style, justify) in enumerate(cells):
        pad = " " * (size - cell_len(text))
        last = n == len(cells) - 1
        if n:
            line.append(" " * GAP)
        if justify == "right":
            line.append(pad)
        line.append(text, style=style)
        if justify != "right" and not last:
            line.append(pad)
    return line


def fitted(columns: Sequence[Column[Row]], rows: Sequence[Row], width: int) -> Group:
    """The table for a terminal ``width`` cells wide, a header line then one line per row:
    every line at most ``width`` cells when the whole columns fit at all (:func:`widths`),
    ``shrink`` cells cut with ``…``. Laid out here, not by rich's ``Table``, which squeezes
    whole columns (``T-b4815…``, ``syn…``) when they do not fit; print it with
    ``soft_wrap=True`` so that a line longer than the terminal is not folded or cropped."""
    raw = [[c.raw(row, at_terminal=True) for c in columns] for row in rows]
    sizes = widths(columns, [[printable(text) for text in line] for line in raw], width)
    kept = [(i, size) for i, size in enumerate(sizes) if size is not None]
    header = _line([(cut(columns[i].header, s), s, "bold", columns[i].justify) for i, s in kept])
    lines = [
        _line(
            [(cut(texts[i], s), s, columns[i].style_of(row), columns[i].justify) for i, s in kept]
        )
        for row, texts in zip(rows, raw, strict=True)
    ]
    return Group(header, *lines)


__all__ = ["FLOOR", "GAP", "Column", "cut", "fitted", "tsv", "widths"]
