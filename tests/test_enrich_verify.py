"""errdex enrich and errdex verify: narratives written, checked, and kept true to the code."""

import ast
import json

import pytest
from conftest import SEED_FILE, SEED_PATH, make_repo, seed_fixture_source
from openai_server import OpenAIServer, Reply, completion, narrative_from


def records(cli):
    return [json.loads(line)["record"] for line in cli("export").output.splitlines()]


@pytest.fixture
def seed_repo(tmp_path, seed):
    repo = tmp_path / "sglang"
    make_repo(repo, {SEED_PATH: seed_fixture_source(seed["record"])})
    return repo


def test_mined_records_come_with_a_verified_offline_narrative(cli, seed_repo):
    cli("mine", str(seed_repo), "--repo", "sgl-project/sglang")
    (record,) = records(cli)
    assert record["writer"] == "offline"
    assert record["documentation"] and record["solutions"]
    assert record["claims"] == []
    for field in ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern"):
        if record[field] is not None:
            ast.parse(record[field])


def test_verify_flags_the_seed_prose_against_the_real_code(cli, tmp_path, seed):
    source = tmp_path / "src"
    (source / SEED_PATH).parent.mkdir(parents=True)
    (source / SEED_PATH).write_text(seed_fixture_source(seed["record"]))
    cli("import", str(SEED_FILE))
    result = cli("verify", "--source", str(source), "--json")
    assert result.exit_code == 1
    answer = json.loads(result.output)
    assert answer["flagged"] == 1 and answer["stale"] == 0
    claims = answer["outcomes"][0]["claims"]
    assert any(
        c["text"].strip("'\"") == "decode" and c["verdict"] == "contradicted" for c in claims
    )
    assert {c["field"] for c in claims} >= {"documentation", "validationCode"}
    (stored,) = records(cli)
    assert (
        stored["claims"] == claims and stored["facts"]["function"] == "resolve_num_tokens_per_req"
    )


def test_verify_follows_moved_sites_and_reports_stale_ones(cli, tmp_path):
    repo = tmp_path / "proj"
    body = (
        'def f(x):\n    raise ValueError(f"bad value {x}")\n\n'
        'def g():\n    raise KeyError("gone soon")\n'
    )
    make_repo(repo, {"m.py": body})
    cli("mine", str(repo))
    make_repo(repo, {"m.py": "# a new header\n# two lines\n" + body.split("\n\n")[0] + "\n"})
    result = cli("verify", "--source", str(repo), "--json")
    answer = json.loads(result.output)
    assert answer["moved"] == 1 and answer["stale"] == 1 and result.exit_code == 1
    moved = next(o for o in answer["outcomes"] if o["status"] == "moved")
    assert moved["line"] == 4
    by_message = {r["errorMessage"]: r for r in records(cli)}
    assert by_message["bad value {x}"]["lineNumber"] == 4
    assert by_message["bad value {x}"]["githubUrl"] is None  # a local repo has no permalink


def test_enrich_rewrites_offline_and_resume_skips(cli, seed_repo):
    cli("mine", str(seed_repo), "--repo", "sgl-project/sglang")
    first = json.loads(cli("enrich", "--json").output)
    assert first["records"] == 1 and first["written"] == 1
    again = json.loads(cli("enrich", "--resume", "--json").output)
    assert again["skipped"] == 1 and again["written"] == 0


def _lying(seen):
    """An answer that contradicts the facts in its documentation and validation code."""
    answer = narrative_from(seen)
    answer["documentation"] = "Only the phases 'decode' and 'target_verify' are recognized."
    answer["validationCode"] = "assert phase in ('decode', 'target_verify'), phase"
    return Reply(body=completion(json.dumps(answer)))


@pytest.mark.parametrize(
    ("behaviour", "writer"), [(None, "llm:test-model"), (_lying, "llm:test-model+offline")]
)
def test_enrich_with_an_llm_keeps_only_verified_fields(
    cli, seed_repo, monkeypatch, behaviour, writer
):
    cli("mine", str(seed_repo), "--repo", "sgl-project/sglang")
    (offline,) = records(cli)
    server = OpenAIServer(behaviour) if behaviour else OpenAIServer()
    with server:
        monkeypatch.setenv("ERRDEX_LLM_BASE_URL", server.url)
        monkeypatch.setenv("ERRDEX_LLM_MODEL", "test-model")
        result = cli("enrich", "--llm", "--json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["llm"]["requests"] >= 1
        assert "draft_decode" in server.requests[0].prompt
    (record,) = records(cli)
    assert record["writer"] == writer
    assert record["claims"] == []
    if behaviour is _lying:
        assert record["documentation"] == offline["documentation"]
        assert record["validationCode"] == offline["validationCode"]
        assert report["fallbacks"] == 1


@pytest.mark.slow
def test_every_code_field_of_a_mined_real_package_parses_and_is_unflagged(cli, tmp_path):
    """The offline writer on a whole real package: code fields parse, the verifier agrees."""
    from corpus import unpacked_wheel

    cli("mine", str(unpacked_wheel("click", "8.1.7")), "--repo", "pallets/click")
    report = json.loads(cli("enrich", "--json").output)
    mined = records(cli)
    assert report["records"] == len(mined) > 100
    for record in mined:
        assert record["writer"] == "offline"
        assert record["documentation"]
        for field in ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern"):
            if record[field]:
                ast.parse(record[field])
    flagged = [r for r in mined if r["claims"]]
    print(f"\noffline narratives with a flagged claim: {len(flagged)}/{len(mined)}")
    assert report["flagged"] == len(flagged) == 0
