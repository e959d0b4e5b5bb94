"""Integers spelled in text by users and files: ASCII decimal digits only.

``str.isdigit`` accepts superscripts (``"²"``) that ``int`` then refuses, and ``int`` accepts
other scripts' digits (``"١"``) and refuses more than 4,300 digits with an error of its own; a
number in an option, a positions or values file or ``version-hint.text`` is none of those.
"""

from __future__ import annotations

# More digits than any 64-bit value (or byte size) needs; longer text is not a number we use.
MAX_DIGITS = 40


def decimal_int(text: str, *, signed: bool = False) -> int | None:
    """The integer ``text`` spells in ASCII digits (a leading ``-`` when ``signed``), or
    ``None`` when it spells none."""
    digits = text[1:] if signed and text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
        return None
    return int(text)
