"""The dbt project's promises: sources match the landing, every column documented, contracts on,
seeds read through staging, and the unit tests that state the rules pass."""

import json
import re
import shutil

import duckdb
import pytest
import yaml

from ingest.errors import TrackerError
from ingest.landing import validation
from tests.conftest import ROOT
from tracker import release
from tracker.build import run_dbt, start_dbt, target_path

LAYERS = {"staging": "staging", "intermediate": "intermediate", "marts": "marts"}


def yaml_models(layer: str) -> dict[str, dict]:
    models = {}
    for path in (ROOT / "models" / layer).rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            models[model["name"]] = model
    return models


def test_every_raw_table_with_a_suite_is_a_dbt_source_and_back():
    sources = set()
    for path in (ROOT / "models" / "staging").rglob("_*__sources.yml"):
        for source in yaml.safe_load(path.read_text())["sources"]:
            assert source["schema"] in ("raw", "meta")  # meta: the ingesters' own bookkeeping
            if source["schema"] == "raw":
                sources |= {t.get("identifier", t["name"]) for t in source["tables"]}
    assert sources == set(validation.suite_names())


@pytest.mark.parametrize("layer", LAYERS)
def test_every_model_file_is_described_with_every_column(layer, built):
    warehouse, _ = built
    files = {p.stem for p in (ROOT / "models" / layer).rglob("*") if p.suffix in (".sql", ".py")}
    documented = yaml_models(layer)
    assert files == set(documented), "each model needs an entry in its folder's YAML"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for name, model in documented.items():
            assert model.get("description"), name
            actual = [r[0] for r in con.execute(f"describe {LAYERS[layer]}.{name}").fetchall()]
            described = [c["name"] for c in model["columns"] if c.get("description")]
            assert actual == described, f"{name}: columns and their descriptions differ"
    finally:
        con.close()


def primary_key(model: dict) -> list[str]:
    """The columns of a mart's primary key constraint: on one column, or on the model."""
    keys = [
        c["name"]
        for c in model["columns"]
        if any(k.get("type") == "primary_key" for k in c.get("constraints", []))
    ]
    for constraint in model.get("constraints", []):
        if constraint.get("type") == "primary_key":
            keys += constraint["columns"]
    return keys


def test_every_mart_has_an_enforced_contract_and_a_primary_key_no_data_test_repeats():
    """What the product reads (released or not) has a contract with a primary key, which the
    warehouse enforces (dbt-duckdb writes the contract's constraints into the table's DDL), as it
    enforces not-null columns and each coded column's values (a check constraint). A data test
    that repeats an enforced constraint checks nothing more and costs every build a dbt node, so
    there is none: not_null or unique on a key or not-null column, a `rules` test's unique on the
    key, accepted_values where a check constraint lists the values."""
    for name, model in yaml_models("marts").items():
        assert model["config"]["contract"]["enforced"] is True, name
        assert all(c.get("data_type") for c in model["columns"]), name
        key = primary_key(model)
        assert key, f"{name} has no primary key constraint"
        for column in model["columns"]:
            enforced = {k["type"] for k in column.get("constraints", [])}
            tests = set(map(str, column.get("data_tests", [])))
            if enforced & {"primary_key", "not_null"}:
                assert "not_null" not in tests, f"{name}.{column['name']}: not_null is enforced"
            if enforced & {"primary_key", "unique"}:
                assert "unique" not in tests, f"{name}.{column['name']}: unique is enforced"
            assert "accepted_values" not in str(tests), f"{name}.{column['name']}: use a check"
        rules = [
            t["rules"]["arguments"]
            for t in model.get("data_tests", [])
            if isinstance(t, dict) and "rules" in t
        ]
        unique = [
            sorted([u] if isinstance(u, str) else u) for r in rules for u in r.get("unique", [])
        ]
        assert sorted(key) not in unique, f"{name}: its key is enforced"
        assert not [r for r in rules if "accepted_values" in r], f"{name}: use a check"


@pytest.mark.build
def test_the_warehouse_refuses_a_mart_row_that_breaks_its_contract(built, tmp_path):
    """The constraints are in the built tables: a duplicate or empty key, or a code outside its
    column's values, cannot be written."""
    copy = tmp_path / "tracker.duckdb"
    copy.write_bytes(built[0].read_bytes())
    con = duckdb.connect(str(copy))
    try:
        keys = con.execute(
            "select table_name, list_sort(constraint_column_names) from duckdb_constraints() "
            "where schema_name = 'marts' and constraint_type = 'PRIMARY KEY'"
        ).fetchall()
        assert dict(keys) == {n: sorted(primary_key(m)) for n, m in yaml_models("marts").items()}
        with pytest.raises(duckdb.ConstraintException, match="primary key"):
            con.execute("insert into marts.frameworks select * from marts.frameworks limit 1")
        with pytest.raises(duckdb.ConstraintException, match="NOT NULL"):
            con.execute("update marts.methods set method_id = null")
        with pytest.raises(duckdb.ConstraintException, match="CHECK constraint"):
            con.execute("update marts.method_frameworks set tier = 'sometimes'")
    finally:
        con.close()


def test_a_mart_not_released_says_so_and_the_release_leaves_it_out():
    """The review mart holds local texts for `tracker label`: its YAML keeps it out of the
    release, and the label exposure lists it."""
    assert "review" in yaml_models("marts")
    assert "review" not in release.mart_docs()
    assert {"frameworks", "removals"} <= set(release.mart_docs())
    exposures = yaml.safe_load((ROOT / "models" / "exposures.yml").read_text())["exposures"]
    by_name = {e["name"]: e["depends_on"] for e in exposures}
    assert by_name["label"] == ["ref('review')"]
    assert "ref('review')" not in by_name["release"]


@pytest.mark.build
def test_dbt_on_a_warehouse_that_was_never_landed_says_what_to_do(warehouse):
    warehouse.parent.mkdir()  # as warehouse/ is in a fresh clone
    with pytest.raises(TrackerError, match="`dbt build` failed") as failed:
        run_dbt("build")
    assert "run `tracker build` (or `tracker snapshot load`) first" in str(failed.value)


def test_staging_reads_the_latest_version_of_each_record(built, tmp_path):
    warehouse, _ = built
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        raw = con.execute("select count(distinct record_key) from raw.arxiv__papers").fetchone()[0]
        staged = con.execute("select count(*) from staging.stg_arxiv__papers").fetchone()[0]
    finally:
        con.close()
    assert raw == staged > 0


def test_only_the_seed_staging_models_read_seeds():
    seeds = {p.stem for p in (ROOT / "seeds").glob("*.csv")}
    for path in (ROOT / "models").rglob("*.sql"):
        if path.parent.name == "seeds":
            continue
        read = set(re.findall(r"ref\('(\w+)'\)", path.read_text())) & seeds
        assert not read, f"{path.name} reads seeds {read}: read stg_seeds__<seed> instead"


def test_the_rules_stated_by_dbt_unit_tests_hold(built):
    """Every unit test beside the models passes (they read the built warehouse's column types)."""
    warehouse, _ = built
    declared = {
        test["name"]
        for path in (ROOT / "models").rglob("_*__unit_tests.yml")
        for test in yaml.safe_load(path.read_text())["unit_tests"]
    }
    # as the tracker runs dbt, so the worker's last parse of the project is reused
    run_dbt("test", "--select", "test_type:unit", warehouse=warehouse)
    results = json.loads((target_path() / "run_results.json").read_text())["results"]
    passed = {r["unique_id"].rsplit(".", 1)[-1] for r in results if r["status"] == "pass"}
    assert declared and passed == declared


@pytest.mark.build
def test_the_tracker_s_dbt_reuses_its_parse_for_a_warehouse_in_another_folder(
    tmp_path, monkeypatch
):
    """dbt parses the whole project again when the profile changes: the tracker's dbt names the
    warehouse by its file name alone (run in its folder), so a warehouse elsewhere (another
    TRACKER_WAREHOUSE, each test's) does not cost a whole parse. A SYNTHETIC one-model project."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: synthetic\nversion: '1.0.0'\nprofile: tracker\n"
    )
    shutil.copy(ROOT / "profiles.yml", project / "profiles.yml")
    (project / "models" / "one.sql").write_text("select 1 as x\n")
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    said = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        dbt = start_dbt("build", warehouse=tmp_path / folder / "tracker.duckdb", project=project)
        said.append(dbt.communicate("", timeout=300)[0])  # no `go`: it parses, then stops
        assert dbt.returncode == 0, said[-1]
    assert "saved manifest not found. Starting full parse" in said[0]
    assert "Unable to do partial parsing" not in said[1], said[1]


RULES_YML = """
models:
  - name: coded
    data_tests:
      - rules:
          name: rules_coded
          arguments:
            not_null: [id, kind]
            unique: [id, [kind, code]]
            accepted_values: {kind: [a, "o'k"], flag: [true]}
            patterns: {code: '[a-z]\\d'}
            references: {parent_id: {to: ref('parents'), field: id}}
  - name: parents
"""
# SYNTHETIC rows: each rule is broken once (id 2 twice, kind null, kind 'b', flag false, code
# 'zz', parent 9, (a, x1) twice), and the rest hold (the quote in "o'k", nulls where allowed)
CODED = """
select * from (values
    (1, 'a', 'x1', true, 1), (2, 'a', 'x1', null, null), (2, null, 'y2', true, 1),
    (3, 'b', 'z3', false, 9), (4, 'o''k', 'zz', true, null)
) as t(id, kind, code, flag, parent_id)
"""


@pytest.mark.build
def test_the_rules_test_returns_each_broken_rule_with_its_value(tmp_path, monkeypatch):
    """The `rules` test (macros/tests/rules.sql) checks a relation's column rules in one dbt
    node: every broken rule comes back, named, with the value that broke it, and nothing that
    keeps its rule does. A SYNTHETIC two-model project."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    shutil.copytree(ROOT / "macros" / "tests", project / "macros" / "tests")
    (project / "dbt_project.yml").write_text(
        "name: synthetic\nversion: '1.0.0'\nprofile: tracker\n"
        "models: {synthetic: {+materialized: table}}\n"
    )
    shutil.copy(ROOT / "profiles.yml", project / "profiles.yml")
    (project / "models" / "coded.sql").write_text(CODED)
    (project / "models" / "parents.sql").write_text("select 1 as id\n")
    (project / "models" / "_models.yml").write_text(RULES_YML)
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    warehouse = tmp_path / "tracker.duckdb"
    with pytest.raises(TrackerError, match=r"rules_coded\.\w+: Got 7 results"):
        run_dbt("build", warehouse=warehouse, project=project)
    compiled = next((tmp_path / "target" / "tracker" / "compiled").rglob("rules_coded.sql"))
    con = duckdb.connect(str(warehouse), read_only=True)
    broken = sorted(con.execute(compiled.read_text()).fetchall(), key=str)
    assert broken == [
        ("accepted_values flag", "false"),
        ("accepted_values kind", "b"),
        ("not_null kind", None),
        ("pattern code", "zz"),
        ("references parent_id", "9"),
        ("unique (kind, code)", "a, x1"),
        ("unique id", "2"),
    ]
