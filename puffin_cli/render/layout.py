"""Lines of the human views (``puffin inspect``, ``puffin table``) fitted to the console's width
(a terminal's; a pipe's console is so wide that nothing folds, render/console.py).

Nothing is cut off (but values longer than :data:`MAX_SHOWN` characters, which are counted):
text folds onto further lines at a space, else after a ``/`` (so a path
breaks between names, mid-name only when one name is longer than a line), else where the line
is full. Styled text keeps its styles across the fold, and no line ends in blanks.
A label row shows its value from column :data:`LABEL_WIDTH`, continuation lines in that column.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.text import Text

from puffin_cli.render.console import DEFAULT_WIDTH, UNFITTED

# Values of label rows start in this column; a longer label gets a line of its own.
LABEL_WIDTH = 19


def fitted(console: Console) -> bool:
    """Whether the console's lines are fitted to a width (a terminal's, or ``COLUMNS``)."""
    return console.width < UNFITTED


def drawing_width(console: Console, used: int = 0) -> int:
    """The cells left after ``used`` for a drawing that fills its line (a bar, a density
    strip): of the console's width, or of :data:`DEFAULT_WIDTH` when lines are not fitted."""
    return (console.width if fitted(console) else DEFAULT_WIDTH) - used


def _fit(text: str, start: int, limit: int) -> tuple[int, bool]:
    """Where the characters of ``text`` from ``start`` that fit in ``limit`` cells end (at
    least one character), and whether more text follows; looks at no more than fits."""
    used = 0
    for index in range(start, len(text)):
        used += get_character_cell_size(text[index])
        if used > limit:
            return max(index, start + 1), True
    return len(text), False


def _spans(text: str, width: int, first: int | None, spaces: bool) -> list[tuple[int, int]]:
    """The (start, end) of each folded line in ``text``: linear in its length, so a 1 MB
    single-token value folds as fast as many short ones."""
    width = max(width, 1)
    limit = width if first is None else max(min(first, width), 1)
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        fit, more = _fit(text, start, limit)
        if not more:
            spans.append((start, len(text)))
            return spans
        cut = text.rfind(" ", start, fit + 1) if spaces else -1
        if cut <= start:
            if limit < width:  # the first line is short: the long word starts on the next
                cut = start
            else:
                slash = text.rfind("/", start, fit)
                cut = slash + 1 if slash >= start else fit
        end = cut
        if spaces:
            while end > start and text[end - 1] == " ":
                end -= 1
        spans.append((start, end))
        start = cut
        if spaces:
            while start < len(text) and text[start] == " ":
                start += 1
        limit = width


def fold(text: str, width: int, first: int | None = None, *, spaces: bool = True) -> list[str]:
    """``text`` in lines of at most ``width`` cells (the first at most ``first``): broken at a
    space (when ``spaces``), else after a ``/``, else where the line is full. A word too long for
    a shorter first line starts on the next (the first line is then empty)."""
    return [text[start:end] for start, end in _spans(text, width, first, spaces)]


def fold_text(text: Text, width: int, first: int | None = None, *,
              spaces: bool = True) -> list[Text]:
    """:func:`fold` for styled text: each line is a slice of ``text``, with its styles (the
    text is divided once, not sliced once per line)."""
    spans = _spans(text.plain, width, first, spaces)
    if len(spans) == 1:
        return [text[spans[0][0]:spans[0][1]]]
    offsets = [offset for span in spans for offset in span]
    pieces = text.divide(offsets)
    return [pieces[2 * i + 1] for i in range(len(spans))]


# The most characters of one value a human view shows (hostile footers and metadata may hold
# values of many MiB); the rest is counted, and --json has it all.
MAX_SHOWN = 1 << 16


def clip(text: Text) -> Text:
    """``text`` cut to :data:`MAX_SHOWN` characters, saying how many more there are."""
    if len(text) <= MAX_SHOWN:
        return text
    more = len(text) - MAX_SHOWN
    return text[:MAX_SHOWN] + Text(f"… ({more:,} more characters; --json shows all)", style="dim")


def columns(rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """Rows of cells as aligned lines (columns two blanks apart; ``right`` ones right-aligned)."""
    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [" " * (w - cell_len(c)) + c if i in right else c + " " * (w - cell_len(c))
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines


def plain_lines(console: Console, lines: list[str]) -> None:
    """Lines written as they are: no style, no folding (paths stay whole for copying)."""
    console.file.write("".join(line + "\n" for line in lines))


def print_line(console: Console, line: Text) -> None:
    """One line already fitted to the width: printed as is, without trailing blanks."""
    line.rstrip()
    if console.no_color and "\t" not in line.plain:
        # Nothing to style and nothing for rich to expand: its characters are what it would
        # print (many times faster than rendering, for views of thousands of lines).
        console.file.write(line.plain + "\n")
        return
    console.print(line, no_wrap=True, overflow="ignore", crop=False)


def print_folded(console: Console, text: str | Text, indent: int = 0, *, style: str = "",
                 spaces: bool = True) -> None:
    """``text`` (in ``style`` when a plain string) folded on lines of its own, each starting in
    column ``indent``; ``spaces=False`` for a path, which then breaks only after a ``/``."""
    styled = clip(text if isinstance(text, Text) else Text(text, style=style))
    for line in fold_text(styled, console.width - indent, spaces=spaces):
        print_line(console, Text(" " * indent) + line)


def row(console: Console, label: str, value: str | Text) -> None:
    """A label, then the value folded from column :data:`LABEL_WIDTH`. A label too long to
    leave two blanks before that column is on a line of its own, the value on the next."""
    text = clip(value if isinstance(value, Text) else Text(value))
    head = label
    if cell_len(label) > LABEL_WIDTH - 2:
        print_folded(console, label, spaces=False)
        head = ""
    for line in fold_text(text, console.width - LABEL_WIDTH):
        print_line(console, Text(head + " " * (LABEL_WIDTH - cell_len(head))) + line)
        head = ""
