"""Finding a method by the name people use (tracker/search.py): the spellings a newcomer types
find the method, a typo is answered with the nearest spellings, and the site's search box and
`tracker method` find the same methods for the same words."""

import duckdb
import pytest

from tests.conftest import ROOT, tracker
from tests.test_report_site import browser  # noqa: F401 (a fixture)
from tracker import search


@pytest.fixture(scope="module")
def catalog() -> list[dict]:
    """The search index of the real catalog (seeds/method_catalog.csv), without a build."""
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute(
        "create table marts.methods as select method_id, name, source_arxiv_id, family, "
        "0 as frameworks_count from read_csv(?, all_varchar = true)",
        [str(ROOT / "seeds" / "method_catalog.csv")],
    )
    return search.index(con)


def ids(methods: list[dict]) -> list[str]:
    return [m["id"] for m in methods]


# (what people type, the method it must find): the issue's cases, then other real spellings
SPELLINGS = [
    ("Dr GRPO", "dr_grpo"),
    ("dr grpo", "dr_grpo"),
    ("drgrpo", "dr_grpo"),
    ("Dr. GRPO", "dr_grpo"),
    ("clip higher", "dapo_clip_higher"),
    ("clip-higher", "dapo_clip_higher"),
    ("GRPO", "grpo"),
    ("grpo", "grpo"),
    ("Group Relative Policy Optimization", "grpo"),
    ("group sequence policy optimisation", "gspo"),
    ("GSPO", "gspo"),
    ("REINFORCE++", "reinforce_pp"),
    ("reinforce_plus_plus", "reinforce_pp"),
    ("RLOO", "rloo"),
    ("rloo", "rloo"),
    ("REINFORCE Leave-One-Out", "rloo"),
    ("Direct Preference Optimization", "dpo"),
    ("KL-Cov", "clip_cov"),
    ("R3", "router_replay"),
    ("A*-PO", "a_star_po"),
    ("Lite PPO", "lite_ppo"),
]


@pytest.mark.parametrize(("query", "method"), SPELLINGS)
def test_a_spelling_people_use_finds_the_method_alone(catalog, query, method):
    found = search.find(catalog, query)
    assert ids(found.methods) == [method] and not found.paper


@pytest.mark.parametrize("query", ["DAPO", "dapo"])
def test_a_name_several_methods_share_finds_each_of_them(catalog, query):
    found = search.find(catalog, query)
    assert ids(found.methods) == sorted(
        ["dapo_clip_higher", "dapo_dynamic_sampling", "dapo_overlong_shaping",
         "dapo_token_level_loss"]
    )  # fmt: skip


@pytest.mark.parametrize(
    "query",
    [
        "2503.14476",
        "arXiv:2503.14476v2",
        "https://arxiv.org/abs/2503.14476",
        "https://arxiv.org/abs/2503.14476v2",
        "arxiv.org/pdf/2503.14476",
        "https://arxiv.org/pdf/2503.14476v1.pdf",
    ],
)
def test_an_arxiv_id_or_url_finds_every_method_of_the_paper(catalog, query):
    found = search.find(catalog, query)
    assert found.paper and "dapo_clip_higher" in ids(found.methods) and len(found.methods) == 4


@pytest.mark.parametrize(
    "query", ["2503.144", "https://example.org/abs/2503.14476", "arxiv.org/abs/2503.14476x"]
)
def test_what_is_not_an_arxiv_id_finds_no_paper(catalog, query):
    assert search.arxiv_id(query) is None and not search.find(catalog, query).paper


def test_a_typo_finds_nothing_and_offers_the_nearest_spelling(catalog):
    found = search.find(catalog, "gspoo")
    assert found.methods == [] and ids(found.nearest) == ["gspo"]
    assert "grpo" in ids(search.find(catalog, "grpoo").nearest)
    assert search.find(catalog, "xyzzy") == search.Found()  # nothing near: no guess


def test_part_of_a_name_lists_every_method_it_is_part_of(catalog):
    found = ids(search.find(catalog, "clip").methods)
    assert {"ppo_clip", "dual_clip", "dapo_clip_higher", "clip_cov"} <= set(found)


def test_the_command_answers_the_issues_spellings(built):
    warehouse, _ = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    for query in ("Dr GRPO", "drgrpo"):
        card = tracker("method", query, env=env)
        assert card.returncode == 0, card.stderr
        assert card.stdout.startswith("Dr. GRPO (no length or std normalisation) (dr_grpo)")
    higher = tracker("method", "clip higher", env=env)
    assert higher.returncode == 0 and "(dapo_clip_higher)" in higher.stdout.splitlines()[0]
    url = tracker("method", "https://arxiv.org/abs/2503.14476v2", env=env)
    assert url.returncode == 0 and url.stdout.count("arXiv:2503.14476") == 4
    typo = tracker("method", "gspoo", env=env)
    assert typo.returncode == 1 and typo.stdout == ""
    assert typo.stderr == (
        "tracker: no method matches 'gspoo'; nearest: gspo (GSPO sequence-level importance ratio)\n"
    )


AGREEMENT = [q for q, _ in SPELLINGS] + [
    "DAPO",
    "2503.14476",
    "https://arxiv.org/pdf/2503.14476v1.pdf",
    "clip",
    "ppo",
    "policy optimization",
    "gspoo",
    "grpoo",
    "xyzzy",
]


def test_the_sites_search_finds_what_the_command_finds(built, browser):  # noqa: F811
    from selenium.webdriver.common.by import By

    warehouse, release = built
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        entries = search.index(con)
    finally:
        con.close()
    browser.get((release.parent / "site" / "index.html").resolve().as_uri())
    box = browser.find_element(By.ID, "search")
    for query in AGREEMENT:
        box.clear()
        box.send_keys(query)
        shown = [
            a.get_attribute("href").rsplit("/", 1)[1].removesuffix(".html")
            for a in browser.find_elements(By.CSS_SELECTOR, "#search-results a")
        ]
        found = search.find(entries, query)
        if found.methods:
            assert shown[: len(found.methods)] == ids(found.methods)[:12], query
        else:
            assert shown == ids(found.nearest), query
            message = browser.find_element(By.CSS_SELECTOR, "#search-results li.none").text
            assert message.startswith(f"No method matches “{query}”"), query
