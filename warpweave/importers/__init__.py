"""Importers: external dependence graphs turned into warpweave models (one module per format).

`meta_ddg` (Meta's raw Triton dumps, `ddg-0.1`), `meta_curated` (their curated solver input,
`curated-ddg-0.2`), `hatschet` (HatScheT GraphML + resource-model XML); `meta_prepared` reads
Meta's recorded solutions as schedules.  Every result passes `core.validate.check_model`; bad
input is an InputError naming the file, the key path and the value.  Each op keeps its node id
in the source graph (`Op.source_id`), which the schedule exporters key by.

Built-ins and plugins register alike, as `Importer` objects in the entry-point group
`warpweave.importers` (`pyproject.toml`); `import_model(source, name, **options)` runs one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from warpweave.core.model import Model
from warpweave.core.registry import Registry
from warpweave.errors import InputError
from warpweave.importers.hatschet import import_hatschet
from warpweave.importers.meta_curated import import_meta_curated
from warpweave.importers.meta_ddg import import_meta_ddg

IMPORTERS = Registry("warpweave.importers", "importer")


@attrs.frozen
class Importer:
    """An input format: `function(source, **options)` returns a checked model; `options` names
    the keyword options it takes (with their meaning); `documents` says whether `source` may be
    a parsed document (a dict) as well as a file."""

    name: str
    description: str
    function: Callable[..., Model] = attrs.field(repr=False)
    options: Mapping[str, str] = attrs.field(factory=dict)
    documents: bool = False


_META_OPTIONS = {
    "loop": "the loop_id to import (default: the first inner loop)",
    "groups": "warp-group sizes over the 32 warps (default 1,4x7,1x3); the first is the "
              "variable-latency group",
    "reg_limit": "registers per thread of every group (default 255)",
    "async_units": "units whose ops hold their group's issue for one cycle only",
}
META_DDG = Importer("meta-ddg", "Meta's raw Triton modulo-scheduler dumps (ddg-0.1)",
                    import_meta_ddg, _META_OPTIONS, documents=True)
META_CURATED = Importer("meta-curated", "Meta's curated solver graphs (curated-ddg-0.2)",
                        import_meta_curated, _META_OPTIONS, documents=True)
HATSCHET = Importer("hatschet", "HatScheT GraphML graph with its resource-model XML",
                    import_hatschet, {"rm": "the resource-model XML (default: beside the graph)"})


def import_model(source: str | os.PathLike | Mapping, fmt: str, **options: Any) -> Model:
    """Import `source` (a file, or a parsed document for the formats that take one) written in
    format `fmt`; options left as None take their defaults."""
    try:
        importer = IMPORTERS.get(fmt)
    except InputError as exc:
        raise exc.with_path(("--from",)) from None
    if isinstance(source, Mapping) and not importer.documents:
        raise InputError(f"the {fmt} importer reads files, not parsed documents", ("--from",),
                         fmt)
    given = {k: v for k, v in options.items() if v is not None}
    for key, value in given.items():
        if key not in importer.options:
            raise InputError(f"not an option of --from {fmt}", ("--" + key.replace("_", "-"),),
                             value)
    return importer.function(source, **given)


__all__ = ["HATSCHET", "IMPORTERS", "META_CURATED", "META_DDG", "Importer", "import_hatschet",
           "import_meta_curated", "import_meta_ddg", "import_model"]
