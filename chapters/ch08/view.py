"""The context gauge: how full the context is, under the spinner while the model thinks.

    上下文 context ████████░░░░░░░░░░░░ 12,840 / 32,000 tokens (40%), measured

"measured" when the number starts from the provider's count of the last
request, "estimated" before there is one (chapters/ch08/measure.py). The bar
turns yellow past the compaction threshold's share of the window. Plain output
needs nothing from here: each compaction is a line of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chapters.ch08.measure import ContextMeter

if TYPE_CHECKING:
    from rich.console import RenderableType

BAR_CELLS = 20


def gauge_line(used: int, window: int, measured: bool) -> str:
    """The gauge as text: a bar of `BAR_CELLS` cells, the numbers, and where they come from."""
    share = used / window if window > 0 else 1.0
    full = min(BAR_CELLS, round(share * BAR_CELLS))
    bar = "█" * full + "░" * (BAR_CELLS - full)
    source = "measured" if measured else "estimated"
    return f"上下文 context {bar} {used:,} / {window:,} tokens ({share:.0%}), {source}"


def context_gauge(meter: ContextMeter, window: int, warn_at: float = 1.0) -> RenderableType | None:
    """The gauge for `console.keep_in_view`; None before the first request was sized."""
    if meter.last == 0:
        return None
    from rich.text import Text

    style = "yellow" if meter.last > warn_at * window else "cyan"
    return Text(gauge_line(meter.last, window, meter.measured), style=style)
