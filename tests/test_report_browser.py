"""The HTML report in a real browser (Debian's chromium, headless, through chromedriver).

The headline numbers shown must equal the audit JSON, sorting and filtering must work, the page
must log no console errors and make no network requests. A screenshot is kept under
out/test-artifacts/ (not committed) for a person to look at.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.cli.app import main

pytestmark = pytest.mark.browser   # drives headless Chromium

ARTIFACTS = REPO / "out" / "test-artifacts"


def _selenium():
    if importlib.util.find_spec("selenium") is None:
        if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
            pytest.fail("selenium is not installed (pip install '.[test]') and PORTKIT_REQUIRE_TOOLS=1")
        pytest.skip("selenium is not installed")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    _selenium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = require_tool("chromium", "chromium (apt-get install chromium chromium-driver)")
    driver_path = require_tool("chromedriver", "chromedriver (apt-get install chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tmp_path_factory.mktemp("chromium-profile")
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                "--window-size=1280,2200"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("report")
    assert main(["audit", str(REPO / "fixtures" / "sample_project"), "--rocm", "5.2", "--format", "json",
                 "-o", str(out / "audit.json"), "--html", str(out / "report.html")]) == 0
    return out / "report.html", json.loads((out / "audit.json").read_text())


def test_report_in_chromium(browser, sample_report):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, doc = sample_report
    browser.get_log("performance")   # drop what came before this page
    browser.get(page.as_uri())
    text = lambda element_id: browser.find_element(By.ID, element_id).text  # noqa: E731
    e, s = doc["estimate"], doc["summary"]
    assert text("kpi-p50") == f"{e['person_weeks']['p50']:.1f}"
    assert text("kpi-p90") == f"{e['person_weeks']['p90']:.1f}"
    assert text("kpi-blockers") == str(s["blockers"])
    assert text("kpi-converted") == f"{s['converted_share'] * 100:.0f}%"

    rows = lambda: browser.find_elements(By.CSS_SELECTOR, "#findings tbody tr")  # noqa: E731
    assert len(rows()) == len(doc["findings"])
    assert text("filter-count") == f"{len(doc['findings'])} of {len(doc['findings'])} findings"

    line_header = browser.find_element(By.CSS_SELECTOR, "#findings th[data-key=line]")
    line_header.click()
    lines = [int(r.find_elements(By.TAG_NAME, "td")[1].text) for r in rows()]
    assert lines == sorted(lines) and line_header.get_attribute("aria-sort") == "ascending"
    line_header.click()
    assert [int(r.find_elements(By.TAG_NAME, "td")[1].text) for r in rows()] == sorted(lines, reverse=True)

    Select(browser.find_element(By.ID, "filter-severity")).select_by_value("high")
    high = [f for f in doc["findings"] if f["severity"] == "high"]
    assert len(rows()) == len(high) > 0
    assert {r.find_elements(By.TAG_NAME, "td")[3].text for r in rows()} == {"high"}
    Select(browser.find_element(By.ID, "filter-severity")).select_by_value("")
    search = browser.find_element(By.ID, "filter-text")
    search.send_keys("PK504")
    assert len(rows()) == sum(1 for f in doc["findings"] if f["code"] == "PK504") > 0

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    search.clear()
    search.send_keys(" ")
    search.clear()
    browser.save_screenshot(str(ARTIFACTS / "sample_report.png"))

    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    requests = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert page.as_uri() in urls
    # chrome:// is the browser's own UI (the search box's clear icon), never the network
    assert [u for u in urls if not u.startswith(("file://", "data:", "chrome://"))] == []


def test_report_is_readable_without_javascript(tmp_path, sample_report):
    """The numbers and the first findings are plain HTML: the script only adds paging and sorting."""
    page, doc = sample_report
    text = page.read_text()
    body = text.split("<script", 1)[0]
    assert f"{doc['estimate']['person_weeks']['p50']:.1f}" in body
    assert body.count('<span class="sev sev-') == len(doc["findings"])
