"""Settings: one frozen object, resolved once at the edge and passed explicitly.

Precedence, lowest to highest: built-in defaults < the config file (``errdex.toml``) <
``ERRDEX_*`` environment variables < command-line flags. The config file is read from
``--config``/``ERRDEX_CONFIG`` when given, else from the user config directory when it exists;
never from the current directory. :data:`SETTINGS` is the single registry of names, defaults
and help texts that ``--help``, ``errdex settings`` and the README are built from.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from errdex.errors import SettingsError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

APP_NAME = "errdex"
ENV_PREFIX = "ERRDEX_"


def default_db_path() -> Path:
    """Return the default store path in the user data directory."""
    return Path(platformdirs.user_data_dir(APP_NAME)) / "errdex.sqlite3"


def default_cache_dir() -> Path:
    """Return the default download and index cache directory."""
    return Path(platformdirs.user_cache_dir(APP_NAME))


def default_config_path() -> Path:
    """Return where the config file is looked for when none is named."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / "errdex.toml"


@dataclass(frozen=True)
class Setting:
    """One entry of the settings registry.

    Attributes:
        name: The attribute name (``ERRDEX_<NAME>`` in the environment, ``name`` in the file).
        help: One sentence for ``--help`` and the README.
    """

    name: str
    help: str

    @property
    def env(self) -> str:
        """The environment variable that sets it."""
        return ENV_PREFIX + self.name.upper()


SETTINGS: tuple[Setting, ...] = (
    Setting("db", "Path of the SQLite store."),
    Setting("cache_dir", "Directory for downloads and matcher indexes."),
    Setting("max_file_bytes", "Files larger than this are reported as too large, not mined."),
    Setting(
        "max_archive_bytes",
        "Downloaded archives that declare or inflate to more than this are refused whole.",
    ),
    Setting(
        "max_compression_ratio",
        "Archive entries that inflate to more than this many times their size are refused.",
    ),
    Setting("window", "Lines of source kept on each side of a site (sourceCode)."),
    Setting("jobs", "Processes that mine one source (this one and jobs - 1 workers)."),
    Setting("include_tests", "Also mine test files (tests/, test_*.py, conftest.py)."),
    Setting(
        "languages",
        "Languages to mine, comma-separated (python, javascript, typescript, go, rust, java);"
        " empty mines them all.",
    ),
    Setting("strict", "Raise on the first file that cannot be mined instead of reporting it."),
    Setting(
        "engine", "Prefilter engine of the matcher: aho-corasick, or hyperscan (errdex[fast])."
    ),
    Setting(
        "llm_base_url",
        "Base URL of an OpenAI-compatible API for the LLM writer (e.g. http://127.0.0.1:30000/v1).",
    ),
    Setting("llm_model", "Model name the LLM writer asks the endpoint for."),
    Setting("llm_api_key", "API key sent as a Bearer token to the LLM endpoint (never printed)."),
    Setting("llm_concurrency", "Requests the LLM writer keeps in flight at once."),
    Setting("llm_timeout", "Seconds one LLM request may take before it is retried."),
    Setting(
        "llm_max_retries",
        "Retries of one LLM request after a timeout, a dropped connection, HTTP 429 or 5xx.",
    ),
    Setting("llm_max_tokens", "Most tokens the LLM may generate for one answer."),
)
"""The registry of every setting, in display order."""


class Settings(BaseModel):
    """The effective configuration of one errdex invocation.

    Attributes:
        db: Path of the SQLite store.
        cache_dir: Directory for downloads and matcher indexes.
        max_file_bytes: Size cap per source file.
        max_archive_bytes: Size cap of a downloaded archive, uncompressed.
        max_compression_ratio: Decompression-bomb guard: the largest uncompressed-to-compressed
            ratio an archive entry may have.
        window: Lines of context on each side of a site.
        jobs: Processes that mine one source (this one and ``jobs - 1`` workers).
        include_tests: Whether test files are mined.
        languages: The languages mined; empty for every language errdex reads.
        strict: Whether a per-file problem raises instead of being reported.
        engine: The matcher's prefilter engine.
        llm_base_url: Base URL of the OpenAI-compatible API (``.../v1``); None disables the
            LLM writer.
        llm_model: The model the LLM writer asks for.
        llm_api_key: The API key (a Bearer token), if the endpoint needs one.
        llm_concurrency: LLM requests in flight at once.
        llm_timeout: Seconds one LLM request may take.
        llm_max_retries: Retries of one LLM request after a transient failure.
        llm_max_tokens: Most tokens the LLM may generate for one answer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    db: Path = Field(default_factory=default_db_path)
    cache_dir: Path = Field(default_factory=default_cache_dir)
    max_file_bytes: int = Field(default=5_000_000, ge=1)
    max_archive_bytes: int = Field(default=512_000_000, ge=1)
    max_compression_ratio: int = Field(default=100, ge=1)
    window: int = Field(default=18, ge=0, le=1000)
    jobs: int = Field(default=1, ge=1, le=256)
    include_tests: bool = False
    languages: tuple[str, ...] = ()
    strict: bool = False
    engine: Literal["aho-corasick", "hyperscan"] = "aho-corasick"
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_concurrency: int = Field(default=4, ge=1, le=256)
    llm_timeout: float = Field(default=120.0, gt=0)
    llm_max_retries: int = Field(default=4, ge=0, le=20)
    llm_max_tokens: int = Field(default=2048, ge=1)

    @field_validator("languages", mode="before")
    @classmethod
    def _split_languages(cls, value: Any) -> Any:
        """Read ``python,go`` (environment, config) as well as a list; check each name."""
        if isinstance(value, str):
            value = [part for part in value.replace(" ", ",").split(",") if part]
        if isinstance(value, (list, tuple)):
            from errdex.extract import LANGUAGES

            unknown = [name for name in value if name not in LANGUAGES]
            if unknown:
                raise ValueError(f"unknown language {unknown[0]!r} (known: {', '.join(LANGUAGES)})")
            return tuple(dict.fromkeys(value))
        return value


@dataclass(frozen=True)
class ResolvedSettings:
    """Settings together with where each value came from.

    Attributes:
        settings: The effective settings.
        origins: For each setting name, ``default``, the config file path, ``env ERRDEX_X``
            or ``flag``.
    """

    settings: Settings
    origins: dict[str, str]


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _from_env(name: str, raw: str) -> Any:
    field = Settings.model_fields[name]
    if field.annotation is bool:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise SettingsError(
            f"{ENV_PREFIX}{name.upper()}={raw!r} is not a boolean (use 1/0, true/false)",
            name=name,
            origin=f"env {ENV_PREFIX}{name.upper()}",
        )
    return raw


def resolve_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> ResolvedSettings:
    """Resolve the effective settings from defaults, config file, environment and flags.

    Args:
        flags: Values given on the command line; ``None`` values mean "not given".
        environ: The environment to read ``ERRDEX_*`` from (``os.environ`` by default).
        config_path: An explicit config file; else ``ERRDEX_CONFIG``, else the user config
            file when it exists.

    Returns:
        The settings and the origin of each value.

    Raises:
        SettingsError: The config file cannot be read or a value is invalid.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    origins = {setting.name: "default" for setting in SETTINGS}

    path = config_path or (
        Path(env[ENV_PREFIX + "CONFIG"]) if env.get(ENV_PREFIX + "CONFIG") else None
    )
    explicit = path is not None
    path = path or default_config_path()
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"cannot read config file {path}: {exc}", origin=str(path)) from exc
        # Settings at the top level, in an [errdex] table, or both (the table wins).
        table = data.pop("errdex", {})
        if not isinstance(table, dict):
            raise SettingsError(f"'errdex' in {path} must be a table ([errdex])", origin=str(path))
        # Another tool's table ([tool.x], [server]) is its own business; an unknown plain
        # value is a typo of a setting, and so is anything unknown in [errdex].
        others = {n: v for n, v in data.items() if not isinstance(v, dict)}
        section = {**others, **table}
        for name, value in section.items():
            if name not in Settings.model_fields:
                raise SettingsError(
                    f"unknown setting {name!r} in {path}", name=name, origin=str(path)
                )
            values[name] = value
            origins[name] = str(path)
    elif explicit:
        raise SettingsError(f"config file not found: {path}", origin=str(path))

    for setting in SETTINGS:
        if setting.env in env:
            values[setting.name] = _from_env(setting.name, env[setting.env])
            origins[setting.name] = f"env {setting.env}"

    for name, value in (flags or {}).items():
        if value is None:
            continue
        if name not in Settings.model_fields:
            raise SettingsError(f"unknown setting {name!r}", name=name, origin="flag")
        values[name] = value
        origins[name] = "flag"

    try:
        settings = Settings(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        raise SettingsError(
            f"invalid value for {name} (from {origins.get(name, '?')}): {error['msg']}",
            name=name,
            origin=origins.get(name, ""),
        ) from exc
    return ResolvedSettings(settings=settings, origins=origins)
