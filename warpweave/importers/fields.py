"""Typed access to the fields of a parsed foreign document, with key paths for errors.

Every importer reads untrusted files; a missing key or a value of the wrong type must become an
InputError naming the key path (`loops[0].ddg.nodes[3].latency`) and the value, never a
KeyError or TypeError deep inside a converter.  The file name is added by the importer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpweave.errors import InputError

Path = tuple[str | int, ...]


def need(parent: Mapping, key: str, path: Path) -> Any:
    """The value of a required key."""
    if key not in parent:
        raise InputError("missing", path + (key,))
    return parent[key]


def as_obj(value: Any, path: Path) -> Mapping:
    return _typed(value, path, Mapping, "an object")


def as_list(value: Any, path: Path) -> list:
    return _typed(value, path, list, "a list")


def _typed(value: Any, path: Path, kind: type, what: str) -> Any:
    if not isinstance(value, kind):
        raise InputError(f"must be {what}", path, value)
    return value


def as_str(value: Any, path: Path) -> str:
    if not isinstance(value, str) or not value:
        raise InputError("must be a non-empty string", path, value)
    return value


def as_bool(value: Any, path: Path) -> bool:
    if not isinstance(value, bool):
        raise InputError("must be true or false", path, value)
    return value


def as_int(value: Any, path: Path, low: int = 0) -> int:
    """An integer >= `low`; numeric text (as in XML attributes) is accepted."""
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError("must be an integer", path, value) from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be an integer", path, value)
    if value < low:
        raise InputError(f"must be >= {low}", path, value)
    return value


def get_int(parent: Mapping, key: str, path: Path, low: int = 0) -> int:
    return as_int(need(parent, key, path), path + (key,), low)


def get_str(parent: Mapping, key: str, path: Path) -> str:
    return as_str(need(parent, key, path), path + (key,))


def get_bool(parent: Mapping, key: str, path: Path) -> bool:
    return as_bool(need(parent, key, path), path + (key,))


def get_list(parent: Mapping, key: str, path: Path) -> list:
    return as_list(need(parent, key, path), path + (key,))


def get_obj(parent: Mapping, key: str, path: Path) -> Mapping:
    return as_obj(need(parent, key, path), path + (key,))
