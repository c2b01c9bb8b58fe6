"""The textbook even-odd (ray casting) test, one point at a time: what the Map's
vectorised selection is checked against."""

from __future__ import annotations


def even_odd(px: float, py: float, xs: list[float], ys: list[float]) -> bool:
    """Whether (px, py) is inside the polygon of vertices (xs, ys)."""
    odd = False
    for i in range(len(xs)):
        x1, y1, x2, y2 = xs[i], ys[i], xs[i - 1], ys[i - 1]
        if (y1 > py) != (y2 > py) and px < x1 + (py - y1) * (x2 - x1) / (y2 - y1):
            odd = not odd
    return odd
