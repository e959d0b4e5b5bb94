"""Run the ``pycon`` examples of a Markdown document as one doctest (names carry from block to
block), in a given folder: by tests/test_docs_examples.py in process, and by
tests/test_install.py with the Python of a fresh venv (so: the standard library only).

    python tests/doc_examples.py DOC.md FOLDER    # exit 1 and the failures on stdout
"""

from __future__ import annotations

import doctest
import os
import re
import sys
from pathlib import Path

_PYCON = re.compile(r"^```pycon\n(.*?)^```", re.MULTILINE | re.DOTALL)


def examples(doc: Path) -> str:
    """Every ``pycon`` block of ``doc``, in order, as one doctest text: every other line left
    blank, so that a failure names the document's own line."""
    text = doc.read_text(encoding="utf-8")
    lines = [""] * (text.count("\n") + 1)
    for match in _PYCON.finditer(text):
        first = text.count("\n", 0, match.start(1))
        for number, line in enumerate(match.group(1).splitlines(), first):
            lines[number] = line
    return "\n".join(lines) if any(lines) else ""


def run(doc: Path, folder: Path) -> tuple[int, int, str]:
    """(examples tried, failed, the failure report), run with ``folder`` as the current
    directory."""
    test = doctest.DocTestParser().get_doctest(examples(doc), {}, doc.name, str(doc), 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    here = Path.cwd()
    os.chdir(folder)
    try:
        result = runner.run(test, out=report.append)
    finally:
        os.chdir(here)
    return result.attempted, result.failed, "".join(report)


if __name__ == "__main__":
    tried, failed, text = run(Path(sys.argv[1]).resolve(), Path(sys.argv[2]))
    print(text, end="")
    print(f"{tried} examples, {failed} failed")
    sys.exit(1 if failed or not tried else 0)
