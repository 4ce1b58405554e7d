"""Extraction: source files → :class:`~errdex.models.RaiseSite` objects, one module per language.

Every extractor has the :class:`Extractor` shape; :func:`extractors` lists the registered ones
so the pipeline can pick them by file suffix.
"""

from __future__ import annotations

from typing import Protocol

from errdex.extract.files import SourceFile
from errdex.models import RaiseSite


class Extractor(Protocol):
    """Finds the error sites of files of one language."""

    language: str
    suffixes: tuple[str, ...]

    def extract(self, file: SourceFile) -> list[RaiseSite]:
        """Return the sites of one file; raise ExtractionError when it cannot be read."""
        ...


def extractors(*, window: int) -> list[Extractor]:
    """Return an instance of every registered extractor.

    Args:
        window: Lines of source kept on each side of a site.
    """
    from errdex.extract.python import PythonExtractor

    return [PythonExtractor(window=window)]
