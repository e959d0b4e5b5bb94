"""Lines of the human views (``puffin inspect``, ``puffin table``) fitted to the console's width.

Nothing is cut off: text folds onto further lines at a space, else after a ``/`` (so a path
breaks between names, mid-name only when one name is longer than a line), else where the line
is full. Styled text keeps its styles across the fold, and no line ends in blanks.
A label row shows its value from column :data:`LABEL_WIDTH`, continuation lines in that column.
"""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.text import Text

# Values of label rows start in this column; a longer label gets a line of its own.
LABEL_WIDTH = 19


def _fit(text: str, limit: int) -> int:
    """How many leading characters of ``text`` fit in ``limit`` cells (at least one)."""
    used = 0
    for index, char in enumerate(text):
        used += get_character_cell_size(char)
        if used > limit:
            return max(index, 1)
    return len(text)


def fold(text: str, width: int, first: int | None = None, *, spaces: bool = True) -> list[str]:
    """``text`` in lines of at most ``width`` cells (the first at most ``first``): broken at a
    space (when ``spaces``), else after a ``/``, else where the line is full. A word too long for
    a shorter first line starts on the next (the first line is then empty)."""
    width = max(width, 1)
    limit = width if first is None else max(min(first, width), 1)
    lines: list[str] = []
    while cell_len(text) > limit:
        fit = _fit(text, limit)
        cut = text.rfind(" ", 0, fit + 1) if spaces else -1
        if cut <= 0:
            if limit < width:  # the first line is short: the long word starts on the next
                cut = 0
            else:
                slash = text.rfind("/", 0, fit)
                cut = slash + 1 if slash >= 0 else fit
        lines.append(text[:cut].rstrip(" ") if spaces else text[:cut])
        text = text[cut:].lstrip(" ") if spaces else text[cut:]
        limit = width
    lines.append(text)
    return lines


def fold_text(text: Text, width: int, first: int | None = None, *,
              spaces: bool = True) -> list[Text]:
    """:func:`fold` for styled text: each line is a slice of ``text``, with its styles."""
    plain = text.plain
    lines = []
    start = 0
    for line in fold(plain, width, first, spaces=spaces):
        start = plain.index(line, start)
        lines.append(text[start:start + len(line)])
        start += len(line)
    return lines


def plain_lines(console: Console, lines: list[str]) -> None:
    """Lines written as they are: no style, no folding (paths stay whole for copying)."""
    console.file.write("".join(line + "\n" for line in lines))


def print_line(console: Console, line: Text) -> None:
    """One line already fitted to the width: printed as is, without trailing blanks."""
    line.rstrip()
    console.print(line, no_wrap=True, overflow="ignore", crop=False)


def print_folded(console: Console, text: str | Text, indent: int = 0, *, style: str = "",
                 spaces: bool = True) -> None:
    """``text`` (in ``style`` when a plain string) folded on lines of its own, each starting in
    column ``indent``; ``spaces=False`` for a path, which then breaks only after a ``/``."""
    styled = text if isinstance(text, Text) else Text(text, style=style)
    for line in fold_text(styled, console.width - indent, spaces=spaces):
        print_line(console, Text(" " * indent) + line)


def row(console: Console, label: str, value: str | Text) -> None:
    """A label, then the value folded from column :data:`LABEL_WIDTH`. A label too long to
    leave two blanks before that column is on a line of its own, the value on the next."""
    text = value if isinstance(value, Text) else Text(value)
    head = label
    if cell_len(label) > LABEL_WIDTH - 2:
        print_folded(console, label, spaces=False)
        head = ""
    for line in fold_text(text, console.width - LABEL_WIDTH):
        print_line(console, Text(head + " " * (LABEL_WIDTH - cell_len(head))) + line)
        head = ""
