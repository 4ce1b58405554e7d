import json
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from errdex.models import (
    SEED_KEYS,
    ErrorRecord,
    RecordEnvelope,
    SeedRecord,
    format_timestamp,
    slugify,
)


def test_seed_round_trips_through_the_model_byte_for_byte(seed_text):
    envelope = RecordEnvelope.model_validate_json(seed_text)
    from errdex.store.jsonl import RecordFormat, envelope_json

    assert envelope_json(envelope, RecordFormat.SEED) == seed_text.strip()


def test_seed_dict_has_exactly_the_seed_keys_in_order(seed):
    record = ErrorRecord.model_validate(seed["record"])
    assert list(record.seed_dict()) == list(seed["record"])
    assert list(record.seed_dict()) == list(SEED_KEYS)


def test_full_dict_puts_errdex_fields_after_the_seed_fields(seed):
    full = ErrorRecord.model_validate(seed["record"]).full_dict()
    keys = list(full)
    assert keys[: len(SEED_KEYS)] == list(SEED_KEYS)
    extras = keys[len(SEED_KEYS) :]
    assert "language" in extras and "template" in extras
    assert not set(extras) & set(SEED_KEYS)


def test_extra_fields_never_leak_into_the_seed_dict(seed):
    record = ErrorRecord.model_validate(seed["record"]).model_copy(
        update={"package": "sglang", "function": "f"}
    )
    assert "package" not in record.seed_dict()
    assert record.full_dict()["package"] == "sglang"


@pytest.mark.parametrize(
    ("template", "slug"),
    [
        ("Unknown speculative phase: {phase}", "unknown-speculative-phase-phase"),
        ("  --Weird__ {x!r}  ", "weird-x-r"),
        ("Éé ünïcode 42", "n-code-42"),
        ("", ""),
    ],
)
def test_slug_rule(template, slug):
    assert slugify(template) == slug


def test_timestamps_keep_milliseconds_and_z():
    assert (
        format_timestamp(datetime(2026, 8, 28, 5, 10, 5, 995123, tzinfo=timezone.utc))
        == "2026-08-28T05:10:05.995Z"
    )


def test_invalid_enum_and_id_are_rejected(seed):
    bad = dict(seed["record"], errorType="weird")
    with pytest.raises(ValidationError):
        SeedRecord.model_validate(bad)
    with pytest.raises(ValidationError):
        SeedRecord.model_validate(dict(seed["record"], id="XYZ"))


def test_json_schema_lists_every_seed_key(seed):
    schema = SeedRecord.model_json_schema(by_alias=True)
    assert list(schema["properties"]) == list(seed["record"])
    assert json.dumps(schema)
