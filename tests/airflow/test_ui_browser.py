"""The ledger pages in a real browser: Debian's headless Chromium driven by Selenium against
the plugin's FastAPI app served by uvicorn on localhost, on a seeded ledger.

The list shows the seeded releases, the GET-form filters work, clicking the blocked release
opens its report (the reason before any plot), its plots (inline SVG) are present and
visible, and nothing from the ledger runs as script. Screenshots are saved as test artifacts
in ``$AIRFLOW_PRIVACY_ARTIFACTS`` (default ``build/test-artifacts``).

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``;
``.ci/run`` installs them). Missing: skipped locally, a failure under ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.airflow.ui_seed import Seeded, seed_ledger

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"
TIMEOUT_S = 20
# a piece of the blocked release's first reason (the real (c,k)-safety witness)
REASON_FRAGMENT = "maximum disclosure against 3 basic implications"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"browser test cannot run under CI: {reason}")
    pytest.skip(reason)


def _binaries() -> tuple[str, str]:
    browser = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    driver = shutil.which("chromedriver") or next(
        (
            p
            for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
            if Path(p).exists()
        ),
        None,
    )
    if browser is None or driver is None:
        _unavailable(
            "Chromium or chromedriver is not installed (apt-get install chromium chromium-driver)"
        )
    assert browser is not None and driver is not None
    return browser, driver


def artifacts_dir() -> Path:
    path = Path(os.environ.get("AIRFLOW_PRIVACY_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return seed_ledger(tmp_path_factory.mktemp("browser-ledger"))


@pytest.fixture(scope="module")
def server(seeded: Seeded) -> Iterator[str]:
    import uvicorn

    from airflow_privacy.providers.airflow.plugin import create_app

    app = create_app(auth=False, url=lambda: seeded.url)
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + TIMEOUT_S
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, chromedriver = _binaries()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1600", "--lang=en-US"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    driver.set_page_load_timeout(TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, TIMEOUT_S).until(condition)


def _row_ids(driver: Any) -> list[int]:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-release-id]")
    return [int(r.get_attribute("data-release-id")) for r in rows]


def _filter(driver: Any, dataset: str, status: str) -> None:
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    Select(driver.find_element(By.ID, "f-dataset")).select_by_value(dataset)
    Select(driver.find_element(By.ID, "f-status")).select_by_value(status)
    # mark the old document, then wait for a fully loaded one without the mark. Not
    # staleness_of(old element): while the page is swapped chromedriver can answer with a
    # generic "Node ... does not belong to the document" error instead of a stale reference
    driver.execute_script("window.__beforeFilter = true;")
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    WebDriverWait(driver, TIMEOUT_S, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__beforeFilter === undefined && document.readyState === 'complete'"
        )
    )


_TEXT_TOP = """
const frag = arguments[0];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
let node;
while ((node = walker.nextNode())) {
  if (node.textContent.includes(frag)) {
    const range = document.createRange();
    range.selectNodeContents(node);
    return range.getBoundingClientRect().top + window.scrollY;
  }
}
return null;
"""


def test_browse_filter_and_open_a_report(browser: Any, server: str, seeded: Seeded) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    out = artifacts_dir()
    browser.get(f"{server}/")
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Privacy ledger: releases"
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    assert _row_ids(browser) == [seeded.published, seeded.blocked, seeded.candidate]
    table = browser.find_element(By.ID, "releases").text
    assert "✓ PUBLISHED" in table and "✗ BLOCKED" in table and "… CANDIDATE" in table
    assert "<script>window.pwned=1</script>" in table  # shown as text ...
    assert browser.execute_script("return window.pwned === undefined")  # ... never run
    browser.save_screenshot(str(out / "ui-releases.png"))

    _filter(browser, "", "blocked")
    assert "status=blocked" in browser.current_url
    assert _row_ids(browser) == [seeded.blocked]
    _filter(browser, "adult", "")
    assert _row_ids(browser) == [seeded.published, seeded.candidate]
    _filter(browser, "adult", "blocked")
    assert _row_ids(browser) == [] and browser.find_element(By.ID, "no-releases").is_displayed()
    browser.find_element(By.LINK_TEXT, "Clear filters").click()
    _wait(browser, lambda d: len(_row_ids(d)) == 3)
    browser.save_screenshot(str(out / "ui-releases-filtered.png"))

    row = browser.find_element(By.CSS_SELECTOR, f'tr[data-release-id="{seeded.blocked}"]')
    row.find_element(By.LINK_TEXT, f"#{seeded.blocked}").click()
    _wait(browser, ec.url_to_be(f"{server}/releases/{seeded.blocked}"))
    _wait(browser, ec.presence_of_element_located((By.TAG_NAME, "svg")))
    plots = browser.find_elements(By.TAG_NAME, "svg")
    visible = [p for p in plots if p.is_displayed() and p.size["width"] > 50]
    assert len(visible) >= 2, f"{len(plots)} svg, {len(visible)} visible"
    for plot in visible:
        assert plot.size["height"] > 20
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "BLOCKED" in text.upper() and REASON_FRAGMENT in text
    reason_top = browser.execute_script(_TEXT_TOP, REASON_FRAGMENT)
    first_plot_top = min(p.location["y"] for p in visible)
    assert reason_top is not None and reason_top < first_plot_top, "the reason comes first"
    assert browser.execute_script("return window.pwned === undefined")
    browser.save_screenshot(str(out / "ui-report-blocked.png"))
    _full_page(browser, out / "ui-report-blocked-full.png")

    browser.find_element(By.PARTIAL_LINK_TEXT, "All releases").click()
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    browser.find_element(By.LINK_TEXT, f"#{seeded.candidate}").click()
    _wait(browser, ec.presence_of_element_located((By.ID, "no-report")))
    assert "No report stored" in browser.find_element(By.ID, "no-report").text
    assert (out / "ui-report-blocked.png").stat().st_size > 10_000


def _full_page(driver: Any, path: Path) -> None:
    """The whole page in one PNG (Chromium's DevTools screenshot beyond the viewport)."""
    import base64

    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))


@pytest.mark.parametrize("ci", [False, True])
def test_missing_chromium_skips_locally_and_fails_under_ci(
    ci: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tests.airflow.test_ui_browser as me

    monkeypatch.setattr(me, "IN_CI", ci)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(Path, "exists", lambda self: False)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match="chromium-driver"):
        me._binaries()
