"""Pausing Python's cyclic garbage collector around work that makes millions of lasting objects.

The collector runs when allocations outnumber deallocations by a threshold, and a full
collection walks every object alive. Mining a source and building the matcher index keep
millions of objects alive, made one after another: the collector walks all of them again and
again, and finds nothing to free (reference counting frees what the work drops). Collecting
took about a tenth of a mining run, and 5.1 s of the 54 s that building an index of a million
records took (0.5 s paused: one collection of the new objects, after the block).

Loading the index is not paused: unpickling makes few collections, and a pause would only
defer them into one walk of everything loaded.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; it resumes after, if it ran before.

    The few reference cycles the block leaves wait for the first collection after it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
