"""errdex, the error index.

Mine every error a codebase can raise, log or warn into structured, explained records, and map
any pasted error back to the exact place that raised it. The public API is what ``__all__``
lists; everything else may change.
"""

from errdex import _native  # noqa: F401  (first: it picks compiled or pure modules)
from errdex.errors import ErrdexError
from errdex.hook import ErrdexLogFilter, explain, install, uninstall
from errdex.match.explain import Explainer, Explanation
from errdex.models import (
    ErrorRecord,
    Match,
    MatchKind,
    RecordEnvelope,
    RunReport,
    SeedRecord,
    SourceInfo,
)
from errdex.pipeline import Pipeline
from errdex.settings import Settings, resolve_settings
from errdex.store.sqlite import SQLiteStore

__version__ = "0.1.0.dev0"

__all__ = [
    "ErrdexError",
    "ErrdexLogFilter",
    "ErrorRecord",
    "Explainer",
    "Explanation",
    "Match",
    "MatchKind",
    "Pipeline",
    "RecordEnvelope",
    "RunReport",
    "SQLiteStore",
    "SeedRecord",
    "Settings",
    "SourceInfo",
    "__version__",
    "explain",
    "install",
    "resolve_settings",
    "uninstall",
]
