"""Typed reads of untrusted JSON objects and Avro records: every field the readers touch.

A value of the wrong type (a string for an int, a list for an object, null, a boolean, a float,
a negative size) is one :class:`PuffinError` that names the file, where in it, the key, what
was expected and what was found; never a ``TypeError`` or ``KeyError`` further on.
"""

from __future__ import annotations

import os
from typing import Any

from puffin_cli.errors import PuffinError

_MISSING: Any = object()


def kind_of(value: Any) -> str:
    """What a JSON value is, for messages: ``null``, ``the number 5``, ``the string 'x'``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        text = repr(value) if isinstance(value, float) or abs(value) < 10**30 else "(huge)"
        return f"the number {text}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, (bytes, bytearray)):
        return f"{len(value)} bytes"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Obj:
    """One JSON object or Avro record, read field by field with the type each must have."""

    def __init__(self, value: Any, where: str, *, path: str | None, code: str) -> None:
        if not isinstance(value, dict):
            raise PuffinError(f"{where} must be an object, found {kind_of(value)}", code=code,
                              path=path)
        self.value: dict[str, Any] = value
        self.where = where
        self.path = path
        self.code = code

    def fail(self, key: str, expected: str, found: Any) -> PuffinError:
        return PuffinError(f"{self.where}: '{key}' must be {expected}, found {kind_of(found)}",
                           code=self.code, path=self.path)

    def _get(self, key: str, default: Any) -> Any:
        if key not in self.value or self.value[key] is None:
            if default is _MISSING:
                if key in self.value:
                    raise self.fail(key, "present", None)
                raise PuffinError(f"{self.where} has no '{key}'", code=self.code, path=self.path)
            return default
        return self.value[key]

    def has(self, key: str) -> bool:
        return self.value.get(key) is not None

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> Any:
        """An integer (``default`` when absent or null; required without one)."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not is_int(value):
            raise self.fail(key, "an integer", value)
        if minimum is not None and value < minimum:
            raise PuffinError(f"{self.where}: '{key}' must be at least {minimum}, found "
                              f"{value}", code=self.code, path=self.path)
        return value

    def text(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, str):
            raise self.fail(key, "a string", value)
        return value

    def location(self, key: str, default: Any = _MISSING) -> Any:
        """A string that names a file or object: a NUL or a lone surrogate (a ``\\ud800``
        escape in JSON) that no file name can hold is refused here, before any path is built
        of it."""
        value = self.text(key, default)
        if isinstance(value, str):
            self.check_location(key, value)
        return value

    def check_location(self, key: str, value: str) -> None:
        """No file name holds a NUL, nor a lone surrogate outside surrogateescape's range."""
        bad = value.find("\0")
        what = "a NUL"
        try:
            os.fsencode(value)
        except UnicodeEncodeError as exc:
            if bad < 0 or exc.start < bad:
                bad, what = exc.start, f"a lone surrogate ({value[exc.start]!r})"
        if bad >= 0:
            raise PuffinError(f"{self.where}: '{key}' is not a usable location: character "
                              f"{bad} is {what} that no file name can hold",
                              code=self.code, path=self.path)

    def array(self, key: str) -> list[Any]:
        """A list; absent or null is empty."""
        value = self._get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, "a list", value)
        return value

    def child(self, key: str, where: str | None = None) -> Obj:
        """A nested object (absent or null: empty)."""
        value = self._get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "an object", value)
        return Obj(value, where or f"{self.where} '{key}'", path=self.path, code=self.code)

    def ints(self, key: str) -> tuple[int, ...]:
        """A list of integers; absent or null is empty."""
        values = self.array(key)
        if not all(is_int(v) for v in values):
            bad = next(v for v in values if not is_int(v))
            raise self.fail(key, "a list of integers", bad)
        return tuple(values)

    def strings(self, key: str) -> tuple[str, ...]:
        values = self.array(key)
        if not all(isinstance(v, str) for v in values):
            bad = next(v for v in values if not isinstance(v, str))
            raise self.fail(key, "a list of strings", bad)
        return tuple(values)

    def locations(self, key: str) -> tuple[str, ...]:
        """A list of locations (absent or null: empty), each as :meth:`location` reads it."""
        values = self.strings(key)
        for value in values:
            self.check_location(key, value)
        return values

    def str_map(self, key: str) -> dict[str, str]:
        """An object of string values (absent or null: empty)."""
        value = self.child(key).value
        for name, item in value.items():
            if not isinstance(item, str):
                raise self.fail(f"{key}.{name}", "a string", item)
        return dict(value)

    def items(self, key: str, where: str) -> list[Obj]:
        """A list of objects (absent or null: empty), each read as an :class:`Obj`."""
        return [Obj(item, f"{where} {i}", path=self.path, code=self.code)
                for i, item in enumerate(self.array(key))]
