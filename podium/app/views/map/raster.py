"""A map's points drawn on the server as one image, for maps too big to send point by
point (Nomic Atlas and datashader draw large maps this way): every point is counted
into a pixel grid, each pixel takes the mean color of its points' topics and an opacity
that grows with their count, and the grid becomes a PNG that plotly places under its
axes. Nothing is sampled: a pixel with one point is as visible as the faintest allowed.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

LONGEST_SIDE = 1000  # pixels of the grid along the data's longer side
FAINTEST = 0.45  # the opacity of a pixel holding one point (the densest is opaque)


@dataclass(frozen=True)
class Extent:
    """The data rectangle the grid covers: x0 <= x < x1 and y0 <= y < y1."""

    x0: float
    x1: float
    y0: float
    y1: float


@dataclass(frozen=True)
class Raster:
    """The drawn image (a PNG data URI) and the rectangle it covers."""

    uri: str
    extent: Extent
    width: int
    height: int


def extent_of(x: npt.NDArray[np.floating], y: npt.NDArray[np.floating]) -> Extent:
    """The points' bounding box, padded by a hundredth so the outermost points fall
    inside the grid's last pixels (and a lone point still has a box)."""
    if not len(x):
        return Extent(0.0, 1.0, 0.0, 1.0)
    x0, x1 = float(np.min(x)), float(np.max(x))
    y0, y1 = float(np.min(y)), float(np.max(y))
    pad = max(x1 - x0, y1 - y0, 1e-6) / 100
    return Extent(x0 - pad, x1 + pad, y0 - pad, y1 + pad)


def grid_shape(extent: Extent, longest: int = LONGEST_SIDE) -> tuple[int, int]:
    """(height, width) in pixels with square pixels in data units."""
    wide, high = extent.x1 - extent.x0, extent.y1 - extent.y0
    if wide >= high:
        return max(1, round(longest * high / wide)), longest
    return longest, max(1, round(longest * wide / high))


def pixel_of(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating],
    extent: Extent,
    shape: tuple[int, int],
) -> npt.NDArray[np.int64]:
    """Each point's pixel as a flat index (row-major, the top row first: y grows up)."""
    height, width = shape
    col = ((x.astype(np.float64) - extent.x0) * (width / (extent.x1 - extent.x0))).astype(np.int64)
    row = ((extent.y1 - y.astype(np.float64)) * (height / (extent.y1 - extent.y0))).astype(np.int64)
    return np.clip(row, 0, height - 1) * width + np.clip(col, 0, width - 1)


def counts(pixels: npt.NDArray[np.int64], shape: tuple[int, int]) -> npt.NDArray[np.int64]:
    """How many points fall in each pixel, as a (height, width) grid."""
    return np.bincount(pixels, minlength=shape[0] * shape[1]).reshape(shape)


def compose(
    pixels: npt.NDArray[np.int64],
    colors: npt.NDArray[np.integer],
    shape: tuple[int, int],
) -> npt.NDArray[np.uint8]:
    """An RGBA image: each pixel the mean RGB of its points' `colors` (a row of RGB per
    point), opacity FAINTEST for one point rising with the log of the count to 1 at the
    densest pixel, transparent where there is none."""
    size = shape[0] * shape[1]
    total = np.bincount(pixels, minlength=size).astype(np.float64)
    rgba = np.zeros((size, 4), np.float64)
    held = total > 0
    for channel in range(3):
        summed = np.bincount(pixels, weights=colors[:, channel], minlength=size)
        rgba[held, channel] = summed[held] / total[held]
    densest = float(np.log1p(total.max() - 1)) if held.any() else 0.0
    densest = densest or 1.0  # every pixel holds one point
    rgba[held, 3] = 255 * (FAINTEST + (1 - FAINTEST) * np.log1p(total[held] - 1) / densest)
    return np.rint(rgba).astype(np.uint8).reshape(shape[0], shape[1], 4)


def png_uri(rgba: npt.NDArray[np.uint8]) -> str:
    """The image as a `data:image/png;base64,...` URI (what plotly's layout image takes)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, "PNG", compress_level=3)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def draw(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating],
    colors: npt.NDArray[np.integer],
    longest: int = LONGEST_SIDE,
) -> Raster:
    """Every point drawn into one image (see `compose`)."""
    extent = extent_of(x, y)
    shape = grid_shape(extent, longest)
    rgba = compose(pixel_of(x, y, extent, shape), colors, shape)
    return Raster(png_uri(rgba), extent, shape[1], shape[0])
