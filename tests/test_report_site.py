"""The report and the static site, built by the README's main job; the site is opened from disk
in headless Chromium (Debian's chromium and chromium-driver, driven by Selenium)."""

import io
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from PIL import Image  # Pillow, which matplotlib (the report's figures) installs

from tracker import outputs, report
from tracker.report import figures

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
    wide = (made / "options_in_3_or_more_frameworks.csv").read_text().splitlines()
    wide_columns = ["AReaL", "NeMo-RL", "OpenRLHF", "ROLL", "TRL", "slime", "verl"]  # the study's
    for figure in report.FIGURES:
        assert {f"{figure}.png", f"{figure}.svg"} <= names
    assert "No proposals yet" in (made / "proposals.md").read_text()  # no GitHub record bundled
    cohorts = (made / "cohorts.svg").read_text()
    assert "No labelled general methods in the pool yet" in cohorts
    for figure, title in [
        ("cohorts", "Cohorts of general methods and first landings, by quarter"),
        ("lags", "Days from first public version to first landing, per method and framework"),
        ("families", "General methods per family of change, included or not"),
        ("catalog_families", "Catalog methods per family, included somewhere or nowhere"),
        ("coded_properties", "Included and not-included papers on coded properties"),
    ]:
        assert title in (made / f"{figure}.svg").read_text(), figure
    assert "Clipping and trust region" in (made / "catalog_families.svg").read_text()  # words
    assert "has a reviewed family yet" in (made / "families.svg").read_text()
    # every figure and table drawn from an input that is still empty says which, with the
    # command or seed that fills it; what has data leads, what has nothing to show comes last
    # and is not drawn in the index
    index = (made / "README.md").read_text().splitlines()
    line = {n: next(x for x in index if f"`{n}.png`" in x) for n in report.FIGURES}
    line |= {t.name: next(x for x in index if f"({t.name}.md)" in x) for t in report.TABLES}
    for name in ("families", "coded_properties", "proposals", "feature_variants"):
        assert "**Still empty:** it fills with" in line[name] and "`tracker " in line[name], name
    for name in ("cohorts", "headline_figures"):  # the first landings; the window, the screen
        assert "**Partly empty:** the rest fills with a complete pool" in line[name], name
    assert "![families]" not in line["families"] and "![cohorts](cohorts.svg)" in line["cohorts"]
    variants = (made / "feature_variants.md").read_text()
    assert "Still empty:" in variants and "seeds/paper_features.csv" in variants
    assert "empty" not in line["lags"]  # drawn from the histories the snapshot holds
    at = {name: index.index(text) for name, text in line.items()}
    assert at["lags"] < at["catalog_families"] < at["cohorts"] < at["families"]
    assert at["coded_properties"] < min(at[t.name] for t in report.TABLES)
    assert at["removals"] < at["headline_figures"] < at["proposals"]
    # the frameworks outside the study are compared with the seven, not mixed into their tables
    comparison = (made / "frameworks_comparison.csv").read_text().splitlines()
    outside = [line for line in comparison[1:] if ",false," in line]
    assert len(outside) == 4 and all(line.split(",")[0] not in wide_columns for line in outside)
    assert "seeds/paper_features.csv codes" in (made / "coded_properties.svg").read_text()
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        [(before,)] = con.execute(
            "select count(*) from marts.methods where first_landing_date < "
            "(select window_from from marts.inclusion_summary)"
        ).fetchall()
    finally:
        con.close()
    assert before > 0 and f"Not shown: {before} first landings before 2025Q1" in cohorts
    # quarters the snapshot or the pool window does not cover are marked in the figure
    assert "not over" in cohorts and "outside" in cohorts and "Hatched:" in cohorts
    assert wide[0] == "method_id," + ",".join(wide_columns)
    gspo = next(line for line in wide if line.startswith("gspo,"))
    assert "actor_rollout_ref.actor.policy_loss.loss_mode=gspo" in gspo
    summary = (made / "headline_figures.csv").read_text()
    assert "pool_complete,false" in summary and "median_lag_days," in summary  # empty, not 0


def test_coded_properties_draw_each_field_as_shares_with_their_counts(tmp_path):
    """The figure reads every coded paper's row of inclusion_features (SYNTHETIC counts)."""
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute(
        "create table marts.inclusion_features as select * from (values "
        "('policy_30b_or_more', 'all', 5, 8, 5 / 8, 2, 20, 2 / 20), "
        "('policy_30b_or_more', 'industry_author_only', 4, 6, 4 / 6, 3, 10, 3 / 10), "
        "('code_released', 'all', 0, 0, null, 3, 4, 0.75)) as t (field, variant, included_n, "
        "included_total, included_share, others_n, others_total, others_share)"
    )
    [svg] = [p for p in figures.save(figures.figure_coded_properties(con), tmp_path / "f")
             if p.suffix == ".svg"]  # fmt: skip
    text = svg.read_text()
    assert "policy 30b or more" in text and "5/8" in text and "2/20" in text
    assert "0/0" in text and "3/4" in text and "4/6" not in text  # the variant all only


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


def test_the_site_is_the_same_for_the_same_warehouse_and_readable_without_javascript(
    built, tmp_path
):
    from tracker import site

    warehouse, release = built
    made = release.parent / "site"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        site.write(con, tmp_path / "again", release)
        methods = con.execute("select count(*) from marts.methods").fetchone()[0]
    finally:
        con.close()
    files = sorted(p.relative_to(made) for p in made.rglob("*") if p.is_file())
    again = sorted(p.relative_to(tmp_path / "again") for p in (tmp_path / "again").rglob("*"))
    assert files == [p for p in again if (tmp_path / "again" / p).is_file()]
    for name in files:
        assert (tmp_path / "again" / name).read_bytes() == (made / name).read_bytes(), name
    # the downloads are the released files themselves, inside the site
    for name in ("manifest.json", "methods.csv", "methods.parquet"):
        assert (made / "downloads" / name).read_bytes() == (release / name).read_bytes()
    # with JavaScript off, every method is in the page and no row is hidden
    home = (made / "index.html").read_text()
    assert home.count('<tr class="method"') == methods and "<tr hidden" not in home
    assert "in_3_or_more_frameworks" not in home and "included_somewhere" not in home


def page_fits(driver) -> bool:
    """Whether the page and every table (or the box it scrolls in) fit the window's width."""
    return driver.execute_script(
        "const body = document.body;"
        "if (body.scrollWidth > body.clientWidth) return false;"
        "return Array.from(document.querySelectorAll('table, .scroll, .matrix-box')).every("
        "  e => e.scrollWidth <= e.clientWidth + 1"
        "    && e.getBoundingClientRect().right <= document.documentElement.clientWidth);"
    )


def shoot(driver, name: str) -> None:
    """Screenshots of the page at a laptop's width and a narrow window's."""
    for width in (1400, 800):
        driver.set_window_size(width, 1000)
        driver.save_screenshot(str(ARTIFACTS / f"{name}-{width}.png"))
    driver.set_window_size(1400, 1000)


def test_the_site_opens_from_disk_and_leads_from_the_search_and_matrix_to_a_methods_option(
    built, browser
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, release = built
    site = (release.parent / "site").resolve()
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir()
    browser.set_window_size(1400, 1000)

    browser.get((site / "index.html").as_uri())
    assert "Framework-inclusion tracker" in browser.title
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth])"
    )
    drawn = len(report.FIGURES) - len({"families", "coded_properties"})  # nothing to draw yet
    assert len(images) == drawn and all(ok and w > 0 for ok, w in images)
    manifest = browser.find_element(By.LINK_TEXT, "manifest.json").get_attribute("href")
    manifest = Path(manifest.removeprefix("file://"))
    assert manifest == site / "downloads" / "manifest.json"  # inside the site: hosted alone
    assert manifest.read_bytes() == (release / "manifest.json").read_bytes()
    local = browser.execute_script(
        "return Array.from(document.querySelectorAll('a, img, script, link'))"
        ".map(e => e.href || e.src).filter(u => u && u.startsWith('file:'))"
    )
    assert local and all(Path(u.removeprefix("file://").split("#")[0]).is_relative_to(site)
                         for u in local)  # fmt: skip
    assert loaded_from_disk_only(browser) == []
    assert page_fits(browser)
    shoot(browser, "home")

    # the search finds a method by arXiv id (with or without "arXiv:" and a version) and by name
    search = browser.find_element(By.ID, "search")
    results = lambda: [  # noqa: E731
        e.text for e in browser.find_elements(By.CSS_SELECTOR, "#search-results a .name")
    ]
    search.send_keys("arXiv:2507.18071v2")
    assert results()[0] == "GSPO sequence-level importance ratio"
    search.clear()
    search.send_keys("sequence-level importance")
    assert "GSPO sequence-level importance ratio" in results()
    search.clear()

    # the matrix: a row per method; filters hide the rows that do not match
    rows = browser.find_elements(By.CSS_SELECTOR, "#methods tr.method")
    assert len(rows) > 90
    shown = browser.find_element(By.ID, "shown")
    assert shown.text == f"{len(rows)} of {len(rows)} methods"
    Select(browser.find_element(By.ID, "filter-framework")).select_by_value("verl")
    Select(browser.find_element(By.ID, "filter-tier")).select_by_value("selectable")
    Select(browser.find_element(By.ID, "filter-family")).select_by_value("clipping_trust_region")
    visible = [r for r in rows if r.is_displayed()]
    assert 0 < len(visible) < len(rows) and shown.text == f"{len(visible)} of {len(rows)} methods"
    names = [r.find_element(By.CSS_SELECTOR, "th a").text for r in visible]
    assert "GSPO sequence-level importance ratio" in names
    assert all(
        r.find_element(By.CSS_SELECTOR, "td[data-framework='verl']").get_attribute("data-tier")
        == "selectable"
        for r in visible
    )
    Select(browser.find_element(By.ID, "filter-family")).select_by_value("kl_regularisation")
    assert "GSPO sequence-level importance ratio" not in [
        r.find_element(By.CSS_SELECTOR, "th a").text for r in rows if r.is_displayed()
    ]  # GSPO is not a KL method
    Select(browser.find_element(By.ID, "filter-family")).select_by_value("clipping_trust_region")

    # a matrix cell leads to the method's card, at the framework's row
    gspo = next(
        r for r in visible if r.find_element(By.CSS_SELECTOR, "th a").text.startswith("GSPO")
    )
    cell = gspo.find_element(By.CSS_SELECTOR, "td[data-framework='verl'] a")
    assert "selectable" in cell.text and " d" in cell.text  # tier, landing and lag
    cell.click()
    assert browser.current_url.endswith("/methods/gspo.html#in-verl")
    table = {
        r.find_element(By.CSS_SELECTOR, "td:first-child").text: r
        for r in browser.find_elements(By.CSS_SELECTOR, "#frameworks tbody tr")
    }
    assert {"verl", "TRL"} <= set(table)
    fragment = table["verl"].find_element(By.CSS_SELECTOR, "code.fragment").text
    assert fragment == "actor_rollout_ref.actor.policy_loss.loss_mode=gspo"
    links = [a.get_attribute("href") for a in table["verl"].find_elements(By.TAG_NAME, "a")]
    assert any(h.startswith("https://github.com/verl-project/verl/commit/") for h in links)
    assert "days after the paper" in table["verl"].text  # the lag beside the landing
    assert loaded_from_disk_only(browser) == []
    assert page_fits(browser)  # the lag and "at the snapshot" columns included
    shoot(browser, "method-gspo")

    table["verl"].find_element(By.LINK_TEXT, "verl").click()
    assert browser.current_url.endswith("/frameworks/verl.html")
    assert page_fits(browser)
    shoot(browser, "framework-verl")

    # the header leads to What's new; the method's history is on its page, at #history
    browser.find_element(By.LINK_TEXT, "What's new").click()
    assert browser.current_url.endswith("/whats-new.html")
    assert page_fits(browser)
    shoot(browser, "whats-new")
    browser.get((site / "methods" / "gspo.html").as_uri() + "#history")
    history = browser.find_elements(By.CSS_SELECTOR, "#history + .scroll tbody tr")
    assert len(history) > 10 and page_fits(browser)
    assert (ARTIFACTS / "home-1400.png").stat().st_size > 10_000


HEADER_GREY = (243, 243, 243)  # thead th's background in site.css


def settled(driver, box) -> dict:
    """Where the page and the matrix's box are scrolled to, once a wheel's scrolling has ended
    (the same twice in a row)."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = (
        "const b = arguments[0];"
        "return {page: scrollY, top: b.scrollTop, left: b.scrollLeft, boxTop:"
        "  b.getBoundingClientRect().top, boxLeft: b.getBoundingClientRect().left};"
    )
    seen = [None]

    def still(d):
        now = d.execute_script(script, box)
        same, seen[0] = now == seen[0], now
        return now if same else False

    return WebDriverWait(driver, 20, poll_frequency=0.25).until(still)


def on_top(driver, selector: str, x: str, y: str) -> list[dict]:
    """Per element matching ``selector``: its box in the window and whether it is what shows at
    its point (x, y) (JavaScript expressions of its rect ``r``), not a cell scrolled over it."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => {"
        "  const r = e.getBoundingClientRect();"
        f"  const seen = document.elementFromPoint({x}, {y});"
        "  return {text: e.textContent.trim(), top: r.top, bottom: r.bottom, left: r.left,"
        "          right: r.right, shown: e.contains(seen)};"
        "});",
        selector,
    )


def grey_rows(png: bytes, left: int, right: int, rows: int) -> list[int]:
    """The screenshot's top ``rows`` pixel rows that are mostly the header's grey between x =
    left and right: where the header row is, seen as a person sees the page."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    found = []
    for y in range(min(rows, image.height)):
        pixels = [image.getpixel((x, y)) for x in range(max(left, 0), min(right, image.width))]
        if pixels and sum(p == HEADER_GREY for p in pixels) > len(pixels) / 2:
            found.append(y)
    return found


@pytest.mark.parametrize("width,height,mobile", [(1400, 1000, False), (390, 844, True)])
def test_the_matrix_keeps_its_framework_names_and_method_column_in_view_while_scrolling(
    built, browser, width, height, mobile
):
    """Scrolled down with the wheel over it, the matrix still shows the framework names in the
    window's top rows; scrolled sideways, the method names stay at its left edge: at a laptop's
    width and a phone's, where the page itself never scrolls sideways."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By

    _, release = built
    ARTIFACTS.mkdir(exist_ok=True)
    name = "phone" if mobile else str(width)
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        browser.get((release.parent / "site" / "index.html").resolve().as_uri())
        assert browser.execute_script("return document.body.scrollWidth <= innerWidth")
        box = browser.find_element(By.CSS_SELECTOR, ".matrix-box")
        browser.execute_script("arguments[0].scrollIntoView()", box)
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(box), 0, 4000).perform()
        where = settled(browser, box)
        assert where["page"] + where["top"] > 2000  # deep into the matrix, however it scrolls
        header = on_top(browser, "#methods thead th.fw", "r.left + r.width / 2", "r.top + 6")
        in_view = [h for h in header if h["left"] >= 0 and h["right"] <= width]
        assert in_view and all(h["shown"] and h["top"] >= -1 and h["bottom"] < 90 for h in in_view)
        png = browser.get_screenshot_as_png()
        (ARTIFACTS / f"matrix-scrolled-down-{name}.png").write_bytes(png)
        assert grey_rows(png, 0, width, 60), "the header row is not in the screenshot's top rows"

        # a laptop sees every framework's column; a phone scrolls sideways to the others
        fits = "return arguments[0].scrollWidth <= arguments[0].clientWidth"
        assert browser.execute_script(fits, box) is not mobile
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(box), 4000, 0).perform()
        where = settled(browser, box)
        methods = on_top(
            browser, "#methods tr.method th[scope=row]", "r.left + 4", "(r.top + r.bottom) / 2"
        )
        rows = [m for m in methods if m["top"] > 90 and m["bottom"] < height]
        assert (where["left"] > 0) is mobile and rows
        assert all(m["shown"] and abs(m["left"] - where["boxLeft"]) <= 1 for m in rows)
        header = on_top(browser, "#methods thead th.fw", "r.left + r.width / 2", "r.top + 6")
        last = header[-1]  # the last framework's name, scrolled into view beside the methods
        assert last["shown"] and last["right"] <= width and -1 <= last["top"] < 90
        png = browser.get_screenshot_as_png()
        (ARTIFACTS / f"matrix-scrolled-sideways-{name}.png").write_bytes(png)
        assert grey_rows(png, 0, width, 60)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_figures_with_data_lead_and_one_without_says_what_fills_it(built):
    """On the bundled snapshot the pool is empty: the figures drawn from the frameworks'
    histories come first, then the cohorts (half drawn), then, as a sentence each with the
    command that fills it instead of an empty plot, the families and coded properties; the
    pool's headline figures follow the figures and name what they wait for."""
    _, release = built
    home = (release.parent / "site" / "index.html").read_text()
    figures = home[
        home.index('<section id="figures">') : home.index(
            "</section>", home.index('<section id="figures">')
        )
    ]
    order = re.findall(r'<figure id="figure-(\w+)"', figures)
    assert order == ["lags", "catalog_families", "cohorts", "families", "coded_properties"]
    for name in ("lags", "catalog_families", "cohorts"):
        assert f'<img src="figures/{name}.svg"' in figures
    waiting = re.findall(r'<figure id="figure-(\w+)" class="waiting">(.*?)</figure>', figures, re.S)
    assert [name for name, _ in waiting] == ["families", "coded_properties"]
    for name, text in waiting:
        assert "<img" not in text and "Still empty: it fills with" in text, name
        assert "<code>tracker label papers</code>" in text, name
    assert "<code>tracker ingest arxiv</code>" in waiting[0][1]
    assert "<code>tracker label features</code>" in waiting[1][1]
    pool = home.index('<section id="pool">')
    assert home.index('<section id="figures">') < pool < home.index('<section id="downloads">')
    assert "Not known yet: share included;" in home[pool:]
    assert "The headline figures need a complete pool of papers" in home[pool:]
    assert "<td>—</td>" not in home[pool:]  # the unknown values are named, not dashed
