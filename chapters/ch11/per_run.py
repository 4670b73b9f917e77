"""State that a part of the harness keeps for each run it serves, forgotten with the run.

The reply check and the call pipeline are listed once in a spec, and a child
agent keeps them (`AgentSpec.child`): the same object serves the parent's run
and every child's, some of them side by side. What it counts (continuations in
a row, the same call and result since the last new one) belongs to one run, so
it is kept per run, and dropped when that run object is.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from shared.agent import Run

T = TypeVar("T")


class PerRun(Generic[T]):
    def __init__(self, new: Callable[[], T]) -> None:
        self._new = new
        self._states: dict[int, T] = {}
        self._lock = threading.RLock()  # a finalizer may run inside a locked block

    def __call__(self, run: Run) -> T:
        """This run's state; a new one (from `new()`) the first time the run is seen."""
        key = id(run)
        with self._lock:
            if key not in self._states:
                self._states[key] = self._new()
                weakref.finalize(run, self._forget, key)  # before the id can be reused
            return self._states[key]

    def _forget(self, key: int) -> None:
        with self._lock:
            self._states.pop(key, None)
