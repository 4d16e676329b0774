"""Importers: external dependence graphs turned into warpweave models (one module per format).

`meta_ddg` (Meta's raw Triton dumps, `ddg-0.1`), `meta_curated` (their curated solver input,
`curated-ddg-0.2`), `hatschet` (HatScheT GraphML + resource-model XML); `meta_prepared` reads
Meta's recorded solutions as schedules.  Every result passes `core.validate.check_model`; bad
input is an InputError naming the file, the key path and the value.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from warpweave.core.errors import InputError
from warpweave.core.model import Model
from warpweave.importers.hatschet import import_hatschet
from warpweave.importers.meta_curated import import_meta_curated
from warpweave.importers.meta_ddg import import_meta_ddg

_META_OPTIONS = {"loop", "groups", "reg_limit", "async_units"}

FORMATS: dict[str, tuple[Callable[..., Model], set[str]]] = {
    "meta-ddg": (import_meta_ddg, _META_OPTIONS),
    "meta-curated": (import_meta_curated, _META_OPTIONS),
    "hatschet": (import_hatschet, {"rm"}),
}


def import_model(path: str | Path, source: str, **options: Any) -> Model:
    """Import `path` written in format `source`; options left as None take their defaults."""
    if source not in FORMATS:
        raise InputError(f"unknown format (formats: {', '.join(FORMATS)})", ("--from",), source)
    importer, allowed = FORMATS[source]
    given = {k: v for k, v in options.items() if v is not None}
    for key, value in given.items():
        if key not in allowed:
            raise InputError(f"not an option of --from {source}",
                             ("--" + key.replace("_", "-"),), value)
    return importer(path, **given)


__all__ = ["FORMATS", "import_hatschet", "import_meta_curated", "import_meta_ddg",
           "import_model"]
