"""Classification: category, handling strategy and root cause of a site, from its class and words.

A first, deterministic classifier: the exception class decides when it is telling
(``FileNotFoundError`` → ``not-found``), else the message's wording does (``"must be one of"`` →
``invalid-enum-value``), else the class family's default applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errdex.models import ErrorType, HandlingStrategy, RaiseSite, SiteKind


@dataclass(frozen=True)
class Classification:
    """The classifier's answer for one site."""

    error_type: ErrorType
    strategy: HandlingStrategy
    background: str
    tags: tuple[str, ...]


_E = ErrorType
_H = HandlingStrategy

# Exact class names (the class a user sees) → (category, strategy, root cause).
_BY_CLASS: dict[str, tuple[ErrorType, HandlingStrategy, str]] = {
    "ValueError": (_E.VALIDATION, _H.VALIDATION, "invalid-format"),
    "TypeError": (_E.TYPE, _H.VALIDATION, "type-mismatch"),
    "KeyError": (_E.NOT_FOUND, _H.VALIDATION, "missing-key"),
    "IndexError": (_E.VALIDATION, _H.VALIDATION, "out-of-range"),
    "LookupError": (_E.NOT_FOUND, _H.VALIDATION, "missing-key"),
    "AttributeError": (_E.TYPE, _H.VALIDATION, "type-mismatch"),
    "FileNotFoundError": (_E.NOT_FOUND, _H.VALIDATION, "file-not-found"),
    "FileExistsError": (_E.IO, _H.VALIDATION, "duplicate-entry"),
    "IsADirectoryError": (_E.IO, _H.VALIDATION, "invalid-format"),
    "NotADirectoryError": (_E.IO, _H.VALIDATION, "invalid-format"),
    "PermissionError": (_E.PERMISSION, _H.CONFIGURATION, "permission-denied"),
    "OSError": (_E.IO, _H.RETRY, "invalid-state"),
    "IOError": (_E.IO, _H.RETRY, "invalid-state"),
    "EOFError": (_E.IO, _H.PROPAGATE, "empty-input"),
    "ConnectionError": (_E.NETWORK, _H.RETRY, "connection-failure"),
    "ConnectionRefusedError": (_E.NETWORK, _H.RETRY, "connection-failure"),
    "ConnectionResetError": (_E.NETWORK, _H.RETRY, "connection-failure"),
    "BrokenPipeError": (_E.NETWORK, _H.RETRY, "connection-failure"),
    "TimeoutError": (_E.TIMEOUT, _H.RETRY, "timeout"),
    "ImportError": (_E.DEPENDENCY, _H.INSTALL, "missing-dependency"),
    "ModuleNotFoundError": (_E.DEPENDENCY, _H.INSTALL, "missing-dependency"),
    "NotImplementedError": (_E.NOT_IMPLEMENTED, _H.FALLBACK, "not-implemented"),
    "RuntimeError": (_E.STATE, _H.PROPAGATE, "invalid-state"),
    "AssertionError": (_E.INTERNAL, _H.PROPAGATE, "assertion-violation"),
    "MemoryError": (_E.RESOURCE, _H.CLEANUP, "resource-exhausted"),
    "RecursionError": (_E.RESOURCE, _H.PROPAGATE, "resource-exhausted"),
    "OverflowError": (_E.VALIDATION, _H.VALIDATION, "out-of-range"),
    "ZeroDivisionError": (_E.VALIDATION, _H.VALIDATION, "out-of-range"),
    "UnicodeDecodeError": (_E.PARSE, _H.VALIDATION, "invalid-format"),
    "UnicodeEncodeError": (_E.PARSE, _H.VALIDATION, "invalid-format"),
    "SyntaxError": (_E.PARSE, _H.VALIDATION, "invalid-format"),
    "JSONDecodeError": (_E.PARSE, _H.VALIDATION, "invalid-format"),
    "StopIteration": (_E.STATE, _H.PROPAGATE, "empty-input"),
    "SystemExit": (_E.CONFIGURATION, _H.CONFIGURATION, "invalid-state"),
    "DeprecationWarning": (_E.DEPRECATION, _H.UPGRADE, "version-mismatch"),
    "PendingDeprecationWarning": (_E.DEPRECATION, _H.UPGRADE, "version-mismatch"),
    "FutureWarning": (_E.DEPRECATION, _H.UPGRADE, "version-mismatch"),
    "RuntimeWarning": (_E.STATE, _H.VALIDATION, "invalid-state"),
    "UserWarning": (_E.VALIDATION, _H.VALIDATION, "unsupported-option"),
    "ResourceWarning": (_E.RESOURCE, _H.CLEANUP, "resource-exhausted"),
}

# Wording → root cause (and category when the class is generic). First match wins.
_BY_WORDS: tuple[tuple[re.Pattern[str], str, ErrorType | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), tag, kind)
    for pattern, tag, kind in (
        (r"\bnot (?:yet )?implemented\b", "not-implemented", _E.NOT_IMPLEMENTED),
        (
            r"\b(?:deprecated|will be removed|no longer supported)\b",
            "version-mismatch",
            _E.DEPRECATION,
        ),
        (r"\b(?:timed? ?out|timeout)\b", "timeout", _E.TIMEOUT),
        (
            r"\bpermission\b|\bnot (?:allowed|permitted)\b|\bforbidden\b",
            "permission-denied",
            _E.PERMISSION,
        ),
        (
            r"\b(?:unauthori[sz]ed|authenticat\w*|credentials?|api key|token)\b",
            "permission-denied",
            _E.AUTHENTICATION,
        ),
        (
            r"\b(?:pip install|is not installed|requires? (?:the )?\w+ (?:package|library)|no module named)\b",
            "missing-dependency",
            _E.DEPENDENCY,
        ),
        (
            r"\bversion\b.*\b(?:required|requires|at least|>=|or (?:higher|newer|later))\b|\bincompatible\b",
            "version-mismatch",
            _E.COMPATIBILITY,
        ),
        (
            r"\b(?:one of|must be in|valid (?:values|options|choices)|unknown|unrecognized|unrecognised|invalid (?:choice|mode|option|value for))\b",
            "invalid-enum-value",
            None,
        ),
        (
            r"\b(?:unsupported|not supported|does not support|only supports?)\b",
            "unsupported-option",
            _E.UNSUPPORTED,
        ),
        (
            r"\b(?:shape|dimension|dimensions|dims?|size mismatch|mismatched)\b",
            "shape-mismatch",
            None,
        ),
        (
            r"\b(?:mutually exclusive|cannot (?:both|be used together)|only one of|exactly one of|either .* or)\b",
            "conflicting-options",
            None,
        ),
        (
            r"\b(?:required|missing|must (?:be )?(?:specify|provide|pass|set))\b",
            "missing-argument",
            None,
        ),
        (
            r"\b(?:out of (?:range|bounds)|must be (?:positive|non-negative|greater|less|between|at least|at most)|exceeds?|too (?:large|small|many|long|big))\b",
            "out-of-range",
            None,
        ),
        (
            r"\b(?:must be (?:a|an|of type)|expected (?:a|an|type)|got (?:a|an)\b|instance of|not callable|is not a)\b",
            "type-mismatch",
            None,
        ),
        (
            r"\b(?:no such file|file not found|does not exist|not found|could not find|cannot find)\b",
            "file-not-found",
            _E.NOT_FOUND,
        ),
        (
            r"\b(?:already exists|duplicate|already registered|already defined)\b",
            "duplicate-entry",
            None,
        ),
        (r"\b(?:empty|no (?:data|items|elements|input))\b", "empty-input", None),
        (
            r"\b(?:out of memory|oom|exhausted|no space|too many open)\b",
            "resource-exhausted",
            _E.RESOURCE,
        ),
        (
            r"\b(?:connection|connect|network|unreachable|refused)\b",
            "connection-failure",
            _E.NETWORK,
        ),
        (
            r"\b(?:parse|parsing|malformed|invalid (?:json|syntax|format)|decode|could not convert)\b",
            "invalid-format",
            _E.PARSE,
        ),
        (
            r"\b(?:not initiali[sz]ed|already (?:started|closed|running)|closed|before calling|not ready|state)\b",
            "invalid-state",
            _E.STATE,
        ),
        (
            r"\b(?:config|configuration|setting|environment variable|env var)\b",
            "unsupported-option",
            _E.CONFIGURATION,
        ),
    )
)

_STRATEGY_BY_TYPE: dict[ErrorType, HandlingStrategy] = {
    _E.VALIDATION: _H.VALIDATION,
    _E.TYPE: _H.VALIDATION,
    _E.NOT_FOUND: _H.VALIDATION,
    _E.CONFIGURATION: _H.CONFIGURATION,
    _E.DEPENDENCY: _H.INSTALL,
    _E.IO: _H.RETRY,
    _E.NETWORK: _H.RETRY,
    _E.TIMEOUT: _H.RETRY,
    _E.PERMISSION: _H.CONFIGURATION,
    _E.AUTHENTICATION: _H.CONFIGURATION,
    _E.STATE: _H.PROPAGATE,
    _E.UNSUPPORTED: _H.FALLBACK,
    _E.NOT_IMPLEMENTED: _H.FALLBACK,
    _E.RESOURCE: _H.CLEANUP,
    _E.PARSE: _H.VALIDATION,
    _E.COMPATIBILITY: _H.UPGRADE,
    _E.INTERNAL: _H.PROPAGATE,
    _E.DEPRECATION: _H.UPGRADE,
}

_GENERIC = frozenset({"ValueError", "RuntimeError", "Exception", "UserWarning", "AssertionError"})


def _class_family(name: str) -> tuple[ErrorType, HandlingStrategy, str] | None:
    if name in _BY_CLASS:
        return _BY_CLASS[name]
    lowered = name.lower()
    for needle, verdict in (
        ("timeout", _BY_CLASS["TimeoutError"]),
        ("notfound", _BY_CLASS["FileNotFoundError"][:2] + ("missing-key",)),
        ("doesnotexist", (_E.NOT_FOUND, _H.VALIDATION, "missing-key")),
        ("permission", _BY_CLASS["PermissionError"]),
        ("auth", (_E.AUTHENTICATION, _H.CONFIGURATION, "permission-denied")),
        ("connection", _BY_CLASS["ConnectionError"]),
        ("import", _BY_CLASS["ImportError"]),
        ("deprecat", _BY_CLASS["DeprecationWarning"]),
        ("config", (_E.CONFIGURATION, _H.CONFIGURATION, "unsupported-option")),
        ("parse", (_E.PARSE, _H.VALIDATION, "invalid-format")),
        ("decode", (_E.PARSE, _H.VALIDATION, "invalid-format")),
        ("validation", (_E.VALIDATION, _H.VALIDATION, "invalid-format")),
        ("type", _BY_CLASS["TypeError"]),
        ("key", _BY_CLASS["KeyError"]),
        ("notimplemented", _BY_CLASS["NotImplementedError"]),
        ("unsupported", (_E.UNSUPPORTED, _H.FALLBACK, "unsupported-option")),
        ("warning", _BY_CLASS["UserWarning"]),
    ):
        if needle in lowered:
            return verdict
    return None


def classify(site: RaiseSite) -> Classification:
    """Classify one site.

    Args:
        site: The site, with its class and template.

    Returns:
        The category, handling strategy, root-cause tag and descriptive tags.
    """
    family = _class_family(site.error_class)
    text = site.template.text
    words: tuple[str, ErrorType | None] | None = None
    for pattern, tag, kind in _BY_WORDS:
        if pattern.search(text):
            words = (tag, kind)
            break
    if family is not None and (site.error_class not in _GENERIC or words is None):
        error_type, strategy, background = family
        if words is not None and site.error_class in ("ValueError", "TypeError"):
            background = words[0]
    elif words is not None:
        background, kind = words
        base = (
            family[0] if family else _E.INTERNAL if site.kind is SiteKind.ASSERT else _E.VALIDATION
        )
        error_type = kind or base
        strategy = _STRATEGY_BY_TYPE[error_type]
    else:
        error_type, strategy, background = _E.INTERNAL, _H.PROPAGATE, "invalid-state"
    if site.http_status is not None:
        if site.http_status in (401,):
            error_type, strategy = _E.AUTHENTICATION, _H.CONFIGURATION
        elif site.http_status == 403:
            error_type, strategy, background = _E.PERMISSION, _H.CONFIGURATION, "permission-denied"
        elif site.http_status == 404:
            error_type, strategy, background = _E.NOT_FOUND, _H.VALIDATION, "missing-key"
        elif site.http_status >= 500:
            error_type, strategy = _E.INTERNAL, _H.RETRY
    tags = [site.kind.value, error_type.value]
    if site.http_status is not None:
        tags.append(f"http-{site.http_status}")
    if site.i18n:
        tags.append("i18n")
    return Classification(error_type, strategy, background, tuple(dict.fromkeys(tags)))
