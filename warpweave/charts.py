"""What the plots of `warpweave sweep --plot` and `warpweave bench --plot` share: the file check
before the work, the writing (SVG directly; PNG through matplotlib, the `png` extra, or one
InputError naming the option), and the SVG pieces both draw with.

The file's suffix chooses the format.  Writing goes through `warpweave.outputs`: a failed write
leaves the old file, never half a new one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path

from warpweave.errors import InputError
from warpweave.outputs import output_file, replacing, write

SUFFIXES = (".svg", ".png")


def check_path(path: str | os.PathLike, option: str = "--plot") -> Path:
    """The plot's file, checked before the work that fills it: a writable directory and a
    suffix of SUFFIXES, else an InputError naming `option`."""
    return output_file(path, option, SUFFIXES)


def save(path: str | os.PathLike, svg: Callable[[], str], png: Callable[[Path], None],
         option: str = "--plot") -> str:
    """Write a chart to `path`: `svg()`'s document for .svg, or `png(file)` drawing with
    matplotlib (its backend set to Agg first) for .png; returns how it was made."""
    check_path(path, option)
    if str(path).endswith(".png"):
        try:
            import matplotlib
        except ImportError:
            raise InputError("PNG needs matplotlib (pip install 'warpweave[png]'); .svg does "
                             "not", (option,), str(path)) from None
        matplotlib.use("Agg")
        with replacing(path, option) as tmp:
            png(tmp)
        return "drawn by matplotlib"
    write(path, svg(), option)
    return "written directly"


def span(values: Sequence[float]) -> tuple[float, float]:
    """The range of `values` padded by 8% each side (a single value: by 5% of it, at least 1),
    so no point sits on a panel's edge."""
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or max(1.0, abs(hi) * 0.05)
    return lo - pad, hi + pad


def document(width: float, height: float, title: str) -> list[str]:
    """The opening of an SVG document: white background, `title` on top (close it with
    `</svg>`)."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            'font-family="sans-serif" font-size="11">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="20" y="22" font-size="14">{escape(title)}</text>']


def frame(x0: float, y0: float, width: float, height: float, axis: str,
          below: float = 40) -> list[str]:
    """A panel's frame and its x axis label, `below` pixels under the frame."""
    return [f'<rect x="{x0}" y="{y0}" width="{width}" height="{height}" fill="none" '
            'stroke="#999"/>',
            f'<text x="{x0 + width / 2}" y="{y0 + height + below}" text-anchor="middle">'
            f'{escape(axis)}</text>']
