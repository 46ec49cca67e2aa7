"""The report and the static site, built by the README's main job; the site is opened from disk
in headless Chromium (Debian's chromium and chromium-driver, driven by Selenium)."""

import shutil
from pathlib import Path

import duckdb
import pytest

from tracker import outputs, report

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"  # screenshots the browser tests write
CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def test_the_report_is_the_same_for_the_same_marts_and_says_what_is_empty(built, tmp_path):
    warehouse, release = built
    made = release.parent / "report"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        again = report.write(con, tmp_path / "again")
    finally:
        con.close()
    assert set(again) | {outputs.MARKER} == {p.name for p in made.iterdir()}
    for name in [*again, outputs.MARKER]:
        assert (tmp_path / "again" / name).read_bytes() == (made / name).read_bytes(), name
    names = set(again)
    for figure in report.FIGURES:
        assert {f"{figure}.png", f"{figure}.svg"} <= names
    assert "No proposals yet" in (made / "proposals.md").read_text()  # no GitHub record bundled
    assert "No labelled general methods in the pool yet" in (made / "cohorts.svg").read_text()
    wide = (made / "options_in_3_or_more_frameworks.csv").read_text().splitlines()
    assert wide[0] == "method_id,AReaL,NeMo-RL,OpenRLHF,ROLL,TRL,slime,verl"
    gspo = next(line for line in wide if line.startswith("gspo,"))
    assert "actor_rollout_ref.actor.policy_loss.loss_mode=gspo" in gspo
    summary = (made / "headline_figures.csv").read_text()
    assert "pool_complete,false" in summary and "median_lag_days," in summary  # empty, not 0


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.fail(
            "the browser tests need Debian's chromium and chromium-driver: "
            "apt-get install -y chromium chromium-driver (the README's test command does)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    yield driver
    driver.quit()


def loaded_from_disk_only(driver) -> list[str]:
    """Resources the page loaded from anywhere but disk (none, for a site that works offline)."""
    return driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => !n.startsWith('file:'))"
    )


def test_the_site_opens_from_disk_and_leads_from_the_index_to_a_methods_option(built, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, release = built
    site = release.parent / "site"
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir()

    browser.get((site / "index.html").as_uri())
    assert "Framework-inclusion tracker" in browser.title
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth])"
    )
    assert len(images) == len(report.FIGURES) and all(ok and w > 0 for ok, w in images)
    manifest = browser.find_element(By.LINK_TEXT, "manifest.json").get_attribute("href")
    assert Path(manifest.removeprefix("file://")).resolve() == release / "manifest.json"
    assert loaded_from_disk_only(browser) == []
    browser.save_screenshot(str(ARTIFACTS / "home.png"))

    browser.find_element(By.LINK_TEXT, "All methods").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#methods tbody tr")
    assert len(rows) > 90
    browser.find_element(By.ID, "filter-name").send_keys("gspo")
    Select(browser.find_element(By.ID, "filter-framework")).select_by_value("verl")
    visible = [r for r in rows if r.is_displayed()]
    assert [r.find_element(By.TAG_NAME, "a").text for r in visible] == [
        "GSPO sequence-level importance ratio"
    ]
    assert browser.find_element(By.ID, "shown").text == f"1 of {len(rows)} methods"
    Select(browser.find_element(By.ID, "filter-family")).select_by_value("kl_regularisation")
    assert not [r for r in rows if r.is_displayed()]  # GSPO is not a KL method
    Select(browser.find_element(By.ID, "filter-family")).select_by_value("")

    visible[0].find_element(By.TAG_NAME, "a").click()
    assert browser.current_url.endswith("/methods/gspo.html")
    table = {
        r.find_element(By.CSS_SELECTOR, "td:first-child").text: r
        for r in browser.find_elements(By.CSS_SELECTOR, "#frameworks tbody tr")
    }
    assert {"verl", "TRL"} <= set(table)
    fragment = table["verl"].find_element(By.CSS_SELECTOR, "code.fragment").text
    assert fragment == "actor_rollout_ref.actor.policy_loss.loss_mode=gspo"
    links = [a.get_attribute("href") for a in table["verl"].find_elements(By.TAG_NAME, "a")]
    assert any(h.startswith("https://github.com/verl-project/verl/commit/") for h in links)
    assert loaded_from_disk_only(browser) == []
    browser.save_screenshot(str(ARTIFACTS / "method-gspo.png"))
    assert (ARTIFACTS / "home.png").stat().st_size > 10_000
