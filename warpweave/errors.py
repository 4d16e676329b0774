"""Input errors: one line naming the file, the key path and the offending value."""

from __future__ import annotations

import json
from collections.abc import Sequence

PathPart = str | int


def format_path(path: Sequence[PathPart]) -> str:
    """`("ops", 3, "uses", "tcc")` -> `ops[3].uses.tcc`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class InputError(Exception):
    """Bad input: a model, schedule or option that cannot be used as given (exit status 2)."""

    _NO_VALUE = object()

    def __init__(self, message: str, path: Sequence[PathPart] = (), value=_NO_VALUE,
                 file: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = tuple(path)
        self.value = value
        self.file = file

    def with_file(self, file: str) -> InputError:
        return InputError(self.message, self.path, self.value, file) if self.file is None else self

    def with_path(self, path: Sequence[PathPart]) -> InputError:
        return InputError(self.message, tuple(path), self.value, self.file)

    def __str__(self) -> str:
        where = [self.file] if self.file else []
        if self.path:
            key = format_path(self.path)
            if self.value is not InputError._NO_VALUE:
                key += f" = {_show(self.value)}"
            where.append(key)
        elif self.value is not InputError._NO_VALUE:
            where.append(_show(self.value))
        return ": ".join(where + [self.message])


def _show(value) -> str:
    """The value as JSON, cut short: a string (a name, a path) at 200 characters, anything else
    (a list, an object) at 60."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    room = 200 if isinstance(value, str) else 60
    return text if len(text) <= room else text[:room - 3] + "..."
