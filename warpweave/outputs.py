"""Everything warpweave writes goes through here: output paths checked before the work that
fills them, names made safe, files written whole or not at all.

- `output_dir` / `output_file` check (and for a directory, make) where an option points, so a
  command fails in one line naming the option before it solves, not with a traceback after.
- `file_stem` and `c_identifiers` turn model and op names - which come from input files, also
  imported ones - into file names that stay inside the output directory and C identifiers that
  are distinct; `renamed` lists what changed, for the command to report.
- `write` replaces a file atomically (a temporary file in the same directory, then a rename):
  a failed or interrupted write leaves the old file, never half a new one.

Every failure is an `InputError` naming the option and the path (exit status 2).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from warpweave.errors import InputError

SAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
NOT_C = re.compile(r"[^A-Za-z0-9_]")
MAX_STEM = 100  # characters of a file stem (file systems allow 255 bytes for the whole name)


def output_dir(path: str | os.PathLike, option: str = "--out", make: bool = True) -> Path:
    """The directory `path`, made (with its parents) if missing - or with `make=False` only
    checked to be makeable, for a caller that makes it when it has something to write; an
    InputError naming `option` if it is a file or cannot be made or written in."""
    d = Path(path)
    if d.exists() and not d.is_dir():
        raise InputError("is a file, not a directory", (option,), str(path))
    if not make:
        first = next(p for p in (d, *d.parents) if p.exists())  # "." or "/" at the latest
        if not first.is_dir():
            raise InputError(f"cannot make the directory: {first} is a file", (option,),
                             str(path))
        if (why := _unwritable(first)) is not None:
            raise InputError(f"cannot make the directory: {first}: {why}", (option,),
                             str(path))
        return d
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the directory: {exc.strerror}", (option,),
                         str(path)) from None
    if (why := _unwritable(d)) is not None:
        raise InputError(f"cannot write in this directory: {why}", (option,), str(path))
    return d


def _unwritable(directory: Path) -> str | None:
    """Why nothing can be written in `directory` (None: it can).  Tried, not read from the
    permission bits: root passes every `os.access` check, yet cannot write in /proc or on a
    read-only file system."""
    probe = directory / f".warpweave-probe-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    probe.rmdir()
    return None


def output_file(path: str | os.PathLike, option: str = "--out",
                suffixes: Iterable[str] = ()) -> Path:
    """The file `path` to be written: its directory must exist and be writable, it must not be
    a directory, and with `suffixes` its suffix must be one of them (the format is read from
    it).  An InputError naming `option` otherwise."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory, not a file", (option,), str(path))
    allowed = tuple(suffixes)
    if allowed and p.suffix not in allowed:
        raise InputError(f"the format is taken from the suffix, which must be "
                         f"{' or '.join(allowed)}", (option,), str(path))
    parent = p.parent
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise InputError(f"directory {parent} {why}", (option,), str(path))
    if (why := _unwritable(parent)) is not None:
        raise InputError(f"cannot write in directory {parent}: {why}", (option,), str(path))
    return p


def write(path: str | os.PathLike, data: str | bytes, option: str = "--out") -> Path:
    """Write `data` to `path` atomically: into a temporary file beside it, then renamed over
    it.  An InputError naming `option` if it cannot be written (the old file, if any, stays)."""
    with replacing(path, option) as tmp:
        tmp.write_bytes(data.encode() if isinstance(data, str) else data)
    return Path(path)


@contextlib.contextmanager
def replacing(path: str | os.PathLike, option: str = "--out") -> Iterator[Path]:
    """A temporary path beside `path` (same suffix: some writers read the format from it) for
    the block to write, renamed over `path` when the block succeeds (a block that wrote nothing
    leaves `path` as it was) and removed when it fails; an OSError in the block or the rename is
    an InputError naming `option`."""
    p = Path(path)
    tmp = p.with_name(f".{p.stem}.{secrets.token_hex(4)}.tmp{p.suffix}")
    try:
        yield tmp
        if tmp.exists():
            os.replace(tmp, p)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", (option,), str(path)) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_into(directory: str | os.PathLike, name: str, data: str | bytes,
               option: str = "--out") -> Path:
    """`write` to `directory / name`, where `name` must be a plain file name (make it one with
    `file_stem`): nothing written through here lands outside `directory`."""
    if name != Path(name).name or name in ("", ".", "..") or "\\" in name or "\0" in name:
        raise ValueError(f"not a plain file name: {name!r}")
    return write(Path(directory) / name, data, option)


def file_stem(name: str) -> str:
    """`name` as a file stem that stays where it is written: letters, digits, `_`, `.` and `-`
    kept, anything else (a `/`, a space, a non-ASCII letter) made `_`, leading dots dropped (no
    `..`, no hidden file), at most MAX_STEM characters; `model` if nothing is left."""
    stem = SAFE_FILE_CHARS.sub("_", name).lstrip(".")[:MAX_STEM]
    return stem or "model"


def c_identifiers(names: Iterable[str]) -> dict[str, str]:
    """A distinct C identifier for each name: characters other than letters, digits and `_`
    made `_`, a `v_` before a leading digit, and `_2`, `_3`, ... after one that another name
    already has (`q-k` and `q_k` become `q_k_2` and `q_k`).  Names that are identifiers already
    keep themselves, whatever their order."""
    names = list(dict.fromkeys(names))
    out = {n: n for n in names if n.isidentifier() and n.isascii()}
    taken = set(out.values())
    for n in names:
        if n in out:
            continue
        base = NOT_C.sub("_", n)
        base = base if base and not base[0].isdigit() else "v_" + base
        ident, k = base, 1
        while ident in taken:
            k += 1
            ident = f"{base}_{k}"
        out[n] = ident
        taken.add(ident)
    return {n: out[n] for n in names}


def renamed(mapping: Mapping[str, str]) -> list[str]:
    """`old -> new` for each name `mapping` changes, to report."""
    return [f"{old!r} -> {new!r}" for old, new in mapping.items() if old != new]
