"""Cost figures with provenance: every number a machine model uses, where it comes from, and
whether it is a measurement, a derivation from a published specification, or an estimate.

`docs/machines.md` prints these tables; `warpweave machines` lists them.  The sources are named by
short keys (`SOURCES`) so that a figure says which document it comes from without repeating it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

# The documents behind the figures (full references in docs/machines.md).  A figure's `place`
# says where in its document the number stands (file and line, table, or section).
SOURCES = {
    "h100-wp": "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)",
    "b200-spec": "NVIDIA DGX/HGX B200 datasheet (dense FP16/BF16 2.25 PFLOPS, 148 SMs)",
    "cuda-guide": "CUDA C++ Programming Guide: compute capabilities, arithmetic throughput table",
    "ptx-isa": "PTX ISA: setmaxnreg, tcgen05 (Tensor Memory) sections",
    "fa3": "Shah et al., FlashAttention-3 (2024), and flash-attention hopper/ sources",
    "fa4": "FlashAttention-4 (Zadouri et al., 2026) and its sources, github.com/Dao-AILab/"
           "flash-attention at 0251105 (flash_attn/cute/flash_fwd_sm100.py, softmax.py, utils.py)",
    "meta-nvlat": "Meta's Triton fork, github.com/facebookexperimental/triton at db4666f: "
                  "NVLatencyModel.cpp and ModuloSchedulePass.cpp in third_party/nvidia/hopper/lib/"
                  "Transforms/ModuloScheduling/ (B200 microbenchmarks)",
    "meta-ddg": "Meta's dependence graphs with those latencies, copied into benchmarks/data/"
                "meta-tlx/ (case*-ddg.json: per node `latency` and `occupancy`)",
    "derived": "derived from the figures above (formula given)",
}


@attrs.frozen
class Figure:
    """One number with its unit, its source key, and whether it is an estimate."""

    name: str
    value: float
    unit: str
    source: str
    estimate: bool = False
    note: str = ""
    place: str = ""

    def __attrs_post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"figure {self.name}: unknown source {self.source!r}")

    def to_dict(self) -> dict:
        d = {"value": self.value, "unit": self.unit, "source": self.source,
             "estimate": self.estimate}
        if self.place:
            d["place"] = self.place
        if self.note:
            d["note"] = self.note
        return d


class Figures:
    """A machine's figures by name."""

    def __init__(self, figures: Iterable[Figure]):
        self._by_name: dict[str, Figure] = {}
        for f in figures:
            if f.name in self._by_name:
                raise ValueError(f"duplicate figure {f.name}")
            self._by_name[f.name] = f

    def __getitem__(self, name: str) -> float:
        return self._by_name[name].value

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Figure]:
        return iter(self._by_name.values())

    def figure(self, name: str) -> Figure:
        return self._by_name[name]
