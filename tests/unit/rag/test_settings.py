"""Two settings surfaces, each setting declared once: the run's Context (what a person changes per run) and the
operator configuration (stage internals, read once from cragraph.toml and CRAGRAPH_<SECTION>__<KEY>). A setting
that moved or was removed is refused wherever it is named, saying where it lives now."""

from __future__ import annotations

import dataclasses

import pytest

from cragraph.cli.agent import set_values
from cragraph.cli.config import render
from rag.config import SECTIONS, ConfigError, Operator, operator, operator_config
from rag.config.load import load
from rag.config.moved import MOVED, REMOVED
from rag.context import Context, UnknownSetting
from rag.planning.plan import CompileSettings, PlanLimits
from rag.planning.settings import MultihopSettings
from rag.policy import client_context


def operator_keys() -> list[str]:
    return [f"{name}.{item.name}" for name, kind in SECTIONS.items() for item in dataclasses.fields(kind)]


def test_each_setting_is_declared_once():
    context = [item.name for item in dataclasses.fields(Context)]
    keys = operator_keys()
    assert len(set(keys)) == len(keys)
    assert not set(context) & set(MOVED), "a Context field also listed as moved to the operator configuration"
    assert not set(context) & set(REMOVED)
    for name, path in MOVED.items():
        assert path in keys, f"{name} moved to {path}, which is not an operator setting"
    for name, (path, _) in REMOVED.items():
        assert path not in keys, f"{name} was removed but {path} is still declared"
    # No Context field mirrors an operator setting: no name and default shared under a stage prefix.
    short = {key.split(".")[1] for key in keys}
    assert not {name for name in context if name.split("_", 1)[-1] in short and name.split("_", 1)[0] in SECTIONS}


def test_the_context_is_small_and_every_field_says_what_it_changes():
    fields = dataclasses.fields(Context)
    assert len(fields) <= 25
    assert "answer_threshold" in {item.name for item in fields}
    for item in fields:
        assert len(item.metadata["description"]) > 20, item.name
    assert fields[0].name == "index"
    assert fields[[f.name for f in fields].index("chat_model")].metadata["json_schema_extra"] == {
        "__template_metadata__": {"kind": "llm"}}


def test_the_planners_derived_settings_agree_with_their_own_defaults():
    assert MultihopSettings().limits() == PlanLimits()
    assert MultihopSettings().compile_settings() == CompileSettings()


def test_an_allowed_value_setting_refuses_others_when_the_context_is_made(monkeypatch):
    with pytest.raises(ValueError, match="Context.multihop must be one of 'auto', 'always', 'never'"):
        Context(multihop="sometimes")
    monkeypatch.setenv("CRAGRAPH_STRATEGY", "fastest")
    with pytest.raises(ValueError, match="strategy"):
        Context()
    monkeypatch.setenv("CRAGRAPH_STRATEGY", "auto")
    assert Context().strategy == "auto"


def test_the_config_file_and_the_environment_set_operator_settings_with_their_source(tmp_path):
    path = tmp_path / "cragraph.toml"
    path.write_text('[retrieval]\npool = 150\nfusion = "rrf"\n[techniques]\nclass_alphas = {"semantic" = 1}\n')
    loaded = load({"CRAGRAPH_CONFIG": str(path), "CRAGRAPH_RERANK__K": "8", "CRAGRAPH_GRADE__UPPER": "0.3"})
    config = loaded.config
    assert (config.retrieval.pool, config.retrieval.fusion, config.rerank.k, config.grade.upper) == (150, "rrf", 8, 0.3)
    assert config.techniques.class_alphas == {"semantic": 1.0}
    assert loaded.sources["retrieval.pool"] == f"file {path}"
    assert loaded.sources["rerank.k"] == "env CRAGRAPH_RERANK__K"
    assert loaded.sources["grade.lower"] == "default"
    assert load({}).config == Operator()


def test_cragraph_config_prints_every_operator_setting_with_its_source(tmp_path):
    path = tmp_path / "ops.toml"
    path.write_text("[select]\nbudget_chars = 3000\n")
    lines = render(load({"CRAGRAPH_CONFIG": str(path), "CRAGRAPH_WEB__TIMEOUT_S": "3"})).splitlines()
    for key in operator_keys():
        section, name = key.split(".")
        assert sum(line.startswith(f"{name} = ") for line in lines) >= 1, key
    assert f"[{next(iter(SECTIONS))}]" in lines
    assert any(line.startswith("budget_chars = 3000") and line.endswith(f"# file {path}") for line in lines)
    assert any(line.startswith("timeout_s = 3.0") and line.endswith("# env CRAGRAPH_WEB__TIMEOUT_S") for line in lines)
    assert any(line.startswith("k = 5") and line.endswith("# default") for line in lines)
    keyed = [line for line in lines if " = " in line and not line.startswith("#")]
    assert len(keyed) == len(operator_keys())


def test_the_config_command_reads_the_environment_when_it_starts(monkeypatch, capsys):
    from cragraph.cli.main import main

    monkeypatch.setenv("CRAGRAPH_RETRIEVAL__POOL", "150")
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("pool = 150 ") and line.endswith("# env CRAGRAPH_RETRIEVAL__POOL") for line in lines)
    monkeypatch.setenv("CRAGRAPH_RETRIEVAL__POOL", "lots")
    assert main(["config"]) == 1
    assert "CRAGRAPH_RETRIEVAL__POOL='lots': [retrieval] pool expects an integer" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[retrieval]\npool_size = 3\n", r"\[retrieval\] pool_size: unknown key \(did you mean 'pool'\?\)"),
        ("[retreival]\npool = 3\n", r"unknown section \[retreival\] \(did you mean 'retrieval'\?\)"),
        ("[rerank]\nk = \"lots\"\n", r"\[rerank\] k must be an integer, not 'lots' \(str\)"),
        ("[retrieval]\nfusion = \"max\"\n", r"\[retrieval\] fusion must be one of 'dynamic', 'score', 'rrf'"),
        ("[retrieval]\nrrf_k = 10\n", r"\[retrieval\] rrf_k: retrieval_rrf_k was removed: rrf fusion uses k = 60"),
        ("upper = 0.3\n", r"upper is outside a \[section\] \(did you mean \[grade\] upper\?\)"),
    ],
)
def test_a_config_file_mistake_is_refused_naming_the_key(tmp_path, text, message):
    path = tmp_path / "cragraph.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load({"CRAGRAPH_CONFIG": str(path)})


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"CRAGRAPH_RERANK__KK": "3"}, r"CRAGRAPH_RERANK__KK: \[rerank\] kk: unknown key \(did you mean 'k'\?\)"),
        ({"CRAGRAPH_RERANK__K": "x"}, r"CRAGRAPH_RERANK__K='x': \[rerank\] k expects an integer"),
        ({"CRAGRAPH_UPPER": "0.3"}, r"CRAGRAPH_UPPER: upper is an operator setting now: set it in cragraph.toml "
                                    r"\[grade\] upper or CRAGRAPH_GRADE__UPPER"),
        ({"CRAGRAPH_EMBEDDER": "e5"}, "CRAGRAPH_EMBEDDER: embedder was removed: the index's own embedder"),
        ({"CRAGRAPH_CONFIG": "/nowhere/cragraph.toml"}, "CRAGRAPH_CONFIG=/nowhere/cragraph.toml: no such file"),
    ],
)
def test_an_environment_mistake_is_refused_naming_the_variable(environ, message):
    with pytest.raises(ConfigError, match=message):
        load(environ)


def test_a_moved_setting_set_per_run_says_where_it_lives_now():
    expected = ("retrieval_pool is an operator setting now: set it in cragraph.toml [retrieval] pool or "
                "CRAGRAPH_RETRIEVAL__POOL")
    with pytest.raises(UnknownSetting) as refused:
        client_context({"retrieval_pool": 10})
    assert str(refused.value) == expected
    with pytest.raises(UnknownSetting) as refused_python:
        Context(retrieval_pool=10)  # type: ignore[call-arg]
    assert str(refused_python.value) == expected
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        Context(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError) as refused_cli:
        set_values(["retrieval_pool=10"])
    assert expected in str(refused_cli.value)
    with pytest.raises(ValueError, match="upper is an operator setting now.*\\[grade\\] upper"):
        set_values(["upper=0.3"])


def test_a_removed_setting_set_per_run_says_what_replaces_it():
    with pytest.raises(ValueError, match="index_thresholds was removed: thresholds stored for the index"):
        set_values(["index_thresholds=false"])
    with pytest.raises(UnknownSetting, match="retrieval_rrf_k was removed: rrf fusion uses k = 60"):
        client_context({"retrieval_rrf_k": 10})


def test_operator_config_changes_the_settings_for_a_block_only():
    before = operator()
    with operator_config(rerank={"k": 9}) as changed:
        assert operator() is changed and operator().rerank.k == 9
        with operator_config(grade={"upper": 0.1}):
            assert (operator().rerank.k, operator().grade.upper) == (9, 0.1)
    assert operator() == before
    with pytest.raises(ConfigError, match=r"\[rerank\] kk: unknown key"), operator_config(rerank={"kk": 1}):
        pass


def test_docs_settings_lists_every_setting():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "docs" / "settings.md").read_text(encoding="utf-8")
    for name in [item.name for item in dataclasses.fields(Context)] + operator_keys() + list(REMOVED):
        assert f"`{name}`" in text, f"docs/settings.md does not list {name}"
