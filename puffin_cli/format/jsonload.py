"""JSON from untrusted bytes, with its cost bounded before anything is built.

A few MiB of JSON such as ``[[],[],...]`` become hundreds of MiB of Python objects, so a size
limit on the bytes is not enough: :func:`loads` first counts an upper bound of the values the
text would create (its commas, colons and opening brackets, in linear time) and refuses before
parsing when either the bytes or the values are over the limit. The value budget is one per
``BYTES_PER_VALUE`` bytes of the limit (a parsed value costs at most ~100 bytes), so one option
bounds both.

Everything that makes the text unusable (syntax, integers longer than Python's digit limit,
nesting deeper than the recursion limit) is one :class:`PuffinError` of kind bad-file.
"""

from __future__ import annotations

import json

from puffin_cli.errors import LimitError, PuffinError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any

BYTES_PER_VALUE = 64
_STRUCTURE = (b",", b"[", b"{", b":")


def value_count(data: bytes) -> int:
    """An upper bound of the values (containers, keys, scalars) ``data`` parses into."""
    return 1 + sum(data.count(token) for token in _STRUCTURE)


def _raise(option: str | None) -> str:
    return f"raise {option} to read it" if option else "a fixed limit"


def check_size(size: int, limit: int, *, what: str, option: str | None, code: str) -> None:
    """Refuse ``size`` bytes of ``what`` above ``limit`` (raised with ``option``, if any)."""
    if size > limit:
        raise LimitError(f"{what} of {size:,} bytes is larger than the limit of {limit:,} "
                         f"bytes ({_raise(option)})", code=code)


def loads(data: bytes, *, limit: int, option: str | None, what: str,
          code: str = "json.syntax") -> Any:
    """Parse ``data`` (UTF-8 JSON) within ``limit`` bytes and ``limit // BYTES_PER_VALUE``
    values; errors name ``what`` and, for limits, ``option``."""
    check_size(len(data), limit, what=what, option=option, code=code)
    values = value_count(data)
    budget = max(limit // BYTES_PER_VALUE, 1)
    if values > budget:
        raise LimitError(f"{what} holds up to {values:,} JSON values, more than the "
                         f"{budget:,} allowed (one per {BYTES_PER_VALUE} bytes of "
                         f"{option or 'its size limit'}; {_raise(option)})", code=code)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PuffinError(f"{what} is not UTF-8: {exc.reason} at byte {exc.start}",
                          code=code) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PuffinError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column "
                          f"{exc.colno}", code=code) from None
    except ValueError as exc:  # an integer longer than Python's digit limit
        raise PuffinError(f"{what} is not usable JSON: {' '.join(str(exc).split()[:12])}",
                          code=code) from None
    except RecursionError:
        raise PuffinError(f"{what} JSON is nested too deeply", code=code) from None
