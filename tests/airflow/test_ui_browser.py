"""The Airflow UI in a real browser: Debian's headless Chromium driven by Selenium against a
real Airflow 3 (``airflow api-server`` + ``scheduler`` + ``dag-processor`` on localhost, a
temporary ``AIRFLOW_HOME`` with a SQLite metadata database, the repository's ``dags/``
folder), signed in through the simple auth manager with the password it generated.

* The ledger pages, as Airflow serves them (the plugin comes from its ``airflow.plugins``
  entry point; the API server reads a seeded ledger): Browse → Privacy ledger shows the
  releases, the GET-form filters work, clicking the blocked release opens its report by
  UUID (the reason before any plot), its plots (inline SVG) are present and visible, the
  superseded release shows who set its attempt aside and why, and nothing from the ledger
  runs as script.
* The trigger form of the sample DAG ``privacy_release``: it renders every param (the
  nullable ones, ``version``, ``check_c``, ``check_k``, ``output_dir``, empty and not
  blocking the Trigger button), submits with its defaults, and the run exists (the REST API
  ``/api/v2/dags/privacy_release/dagRuns`` with a token says so, with the defaults as its
  conf). The run is not awaited (with the defaults on a fresh ledger it stops at
  ``open_attempt``: the first release must be declared).
* The steward's decisions DAG ``privacy_steward_decisions``: a supersede asked on the
  command line is read (who asked, why, the block's reason) and set aside from the task's
  "Required Action" form, with a reason; the ledger names both people.

One Airflow serves both tests (a module-scoped fixture). Screenshots are saved as test
artifacts in ``$AIRFLOW_PRIVACY_ARTIFACTS`` (default ``build/test-artifacts``), and the
Airflow processes' logs under ``airflow-logs/`` there.

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``;
``.ci/run`` installs them). Missing: skipped locally, a failure under ``CI=true``.
"""

from __future__ import annotations

import base64
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.airflow.live import (
    DAG_ID,
    TIMEOUT_S,
    USER,
    Airflow,
    artifacts_dir,
    running_airflow,
    wait_for,
)
from tests.airflow.ui_seed import EVIL, STEWARD, Seeded, seed_ledger

pytestmark = pytest.mark.long_module

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"
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


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return seed_ledger(tmp_path_factory.mktemp("browser-ledger"))


@pytest.fixture(scope="module")
def airflow(seeded: Seeded, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Airflow]:
    """API server + scheduler + DAG processor on a free localhost port, one for the module.
    The API server reads the seeded ledger; the scheduler's tasks use their own default
    ledger in the temporary home (a triggered run never touches the seeded one)."""
    _binaries()  # no browser: skip before starting anything
    tmp = tmp_path_factory.mktemp("airflow")
    with running_airflow(tmp, "ui", ROOT / "dags", DAG_ID,
                         api_env={"AIRFLOW_PRIVACY_LEDGER_URL": seeded.url}) as af:  # fmt: skip
        yield af


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


@pytest.fixture(scope="module")
def session(airflow: Airflow, browser: Any) -> Any:
    """The browser, signed in to Airflow (the simple auth manager's login form, with the
    password it generated in ``AIRFLOW_HOME``). Airflow is set up first so that the browser
    quits (closing its connections) before Airflow is stopped."""
    from selenium.webdriver.common.by import By

    browser.get(f"{airflow.base}/")
    _wait(
        browser, lambda d: "/auth/login" in d.current_url and d.find_elements(By.NAME, "password")
    )
    browser.find_element(By.NAME, "username").send_keys(USER)
    browser.find_element(By.NAME, "password").send_keys(airflow.password)
    _button(browser, "Sign in").click()
    _wait(browser, lambda d: "/auth/login" not in d.current_url)
    _wait(browser, lambda d: any(c["name"] == "_token" for c in d.get_cookies()))
    return browser


# ------------------------------------------------------------------------------- helpers
def _wait(driver: Any, condition: Any, timeout: float = TIMEOUT_S) -> Any:
    """``condition`` once truthy; a React UI re-renders, so a stale or missing element
    means "not yet"."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (StaleElementReferenceException, NoSuchElementException)
    return WebDriverWait(driver, timeout, ignored_exceptions=ignored).until(condition)


def _with_text(scope: Any, css: str, text: str = "", contains: bool = False) -> list[Any]:
    """The elements matching ``css`` whose text is ``text`` (or contains it)."""
    from selenium.webdriver.common.by import By

    found = scope.find_elements(By.CSS_SELECTOR, css)
    if not text:
        return list(found)
    return [e for e in found if (text in e.text if contains else e.text.strip() == text)]


def _button(scope: Any, text: str) -> Any:
    found = _with_text(scope, "button", text)
    assert found, f"no button {text!r}"
    return found[-1]


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


def _full_page(driver: Any, path: Path) -> None:
    """The whole page in one PNG (Chromium's DevTools screenshot beyond the viewport)."""
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))


# --------------------------------------------------------------------------- the ledger
def test_browse_filter_and_open_a_report(session: Any, airflow: Airflow, seeded: Seeded) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    out = artifacts_dir()
    privacy = f"{airflow.base}/privacy"
    # the UI's navigation: Browse -> Privacy ledger, the plugin's page in an iframe
    browser = session
    browser.get(f"{airflow.base}/dags")
    _wait(browser, lambda d: _with_text(d, "button", "Browse"))[0].click()
    _wait(browser, lambda d: _with_text(d, "[role=menuitem]", "Privacy ledger"))[0].click()
    frame = _wait(browser, ec.presence_of_element_located((By.TAG_NAME, "iframe")))
    assert frame.get_attribute("src").rstrip("/").endswith("/privacy")
    browser.switch_to.frame(frame)
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    assert _row_ids(browser) == seeded.all
    browser.switch_to.default_content()
    browser.save_screenshot(str(out / "ui-airflow-browse-privacy-ledger.png"))

    # the pages themselves
    browser.get(f"{privacy}/")
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Privacy ledger: releases"
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    assert _row_ids(browser) == seeded.all
    table = browser.find_element(By.ID, "releases").text
    for words in ("✓ PUBLISHED", "✗ BLOCKED", "… CANDIDATE", "↷ SUPERSEDED"):
        assert words in table, words
    assert EVIL in table  # shown as text ...
    assert browser.execute_script("return window.pwned === undefined")  # ... never run
    browser.save_screenshot(str(out / "ui-releases.png"))

    _filter(browser, "", "blocked")
    assert "status=blocked" in browser.current_url
    assert _row_ids(browser) == [seeded.blocked]
    _filter(browser, "adult", "")
    assert _row_ids(browser) == [seeded.published, seeded.candidate, seeded.superseded]
    _filter(browser, "adult", "superseded")
    assert _row_ids(browser) == [seeded.superseded]
    _filter(browser, "adult", "blocked")
    assert _row_ids(browser) == [] and browser.find_element(By.ID, "no-releases").is_displayed()
    browser.find_element(By.LINK_TEXT, "Clear filters").click()
    _wait(browser, lambda d: len(_row_ids(d)) == len(seeded.all))
    browser.save_screenshot(str(out / "ui-releases-filtered.png"))

    # the blocked release's report, by its UUID
    row = browser.find_element(By.CSS_SELECTOR, f'tr[data-release-id="{seeded.blocked}"]')
    row.find_element(By.LINK_TEXT, f"#{seeded.blocked}").click()
    _wait(browser, ec.url_to_be(f"{privacy}/releases/{seeded.uuid(seeded.blocked)}"))
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
    # the way forward, in the verdict: the groups to suppress and the parameter that passes
    forward = browser.find_element(By.ID, "way-forward")
    assert forward.is_displayed() and forward.location["y"] < first_plot_top
    assert "suppressing 5 of 2,000 records (0.2%) in 2 of 16 groups passes k-anonymity" in text
    assert "k-anonymity passes at k=2 (asked 5; re-checked)" in text
    assert browser.execute_script("return window.pwned === undefined")
    browser.save_screenshot(str(out / "ui-report-blocked.png"))
    _full_page(browser, out / "ui-report-blocked-full.png")

    # the superseded release: no report, its attempt says who set it aside, when and why
    browser.find_element(By.PARTIAL_LINK_TEXT, "All releases").click()
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    browser.find_element(By.LINK_TEXT, f"#{seeded.superseded}").click()
    _wait(browser, ec.url_to_be(f"{privacy}/releases/{seeded.uuid(seeded.superseded)}"))
    attempt = _wait(browser, ec.presence_of_element_located((By.ID, "attempt-1"))).text
    assert "↷ SUPERSEDED" in attempt and f"superseded by {STEWARD}" in attempt
    assert "composition_audit: no result was recorded" in attempt and "✓ PASSED" in attempt
    assert "No report stored" in browser.find_element(By.ID, "no-report").text
    assert browser.execute_script("return window.pwned === undefined")
    _full_page(browser, out / "ui-release-superseded-attempts.png")

    browser.find_element(By.PARTIAL_LINK_TEXT, "All releases").click()
    _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
    browser.find_element(By.LINK_TEXT, f"#{seeded.candidate}").click()
    _wait(browser, ec.presence_of_element_located((By.ID, "no-report")))
    assert "No report stored" in browser.find_element(By.ID, "no-report").text
    assert (out / "ui-report-blocked.png").stat().st_size > 10_000

    # the published release's attempts, each linking its own report (a run's link opens it)
    browser.get(f"{privacy}/releases/{seeded.uuid(seeded.published)}?view=ledger")
    link = _wait(browser, lambda d: d.find_elements(By.LINK_TEXT, "its release report"))[0]
    link.click()
    _wait(browser, lambda d: "/privacy/attempts/" in d.current_url)
    nav = _wait(browser, ec.presence_of_element_located((By.CLASS_NAME, "privacy-nav"))).text
    assert "The report of attempt" in nav and "PUBLISHED" in nav
    assert browser.execute_script("return window.pwned === undefined")
    _full_page(browser, out / "ui-attempt-report.png")


# --------------------------------------------------------------------- the trigger form
NULLABLE = ("version", "check_c", "check_k", "output_dir")


def _dag_defaults() -> dict[str, Any]:
    from airflow_privacy.example_dags.privacy_release import dag

    return {name: dag.params[name] for name in dag.params}


def _field(dialog: Any, name: str) -> tuple[Any, Any]:
    """The input of param ``name`` in the trigger form (Airflow names it ``element_<param>``)
    and its label."""
    from selenium.webdriver.common.by import By

    found = dialog.find_elements(By.NAME, f"element_{name}")
    assert found, f"param {name} is not rendered in the trigger form"
    box = found[0]
    labels = box.find_elements(
        By.XPATH, "ancestor::*[@data-scope='field' and @data-part='root'][1]//label"
    )
    return box, labels[0] if labels else None


def _shows(box: Any, default: Any) -> bool:
    """Whether the form shows ``default`` in ``box`` (numbers compared as numbers)."""
    value = box.get_attribute("value") or ""
    if isinstance(default, bool):
        return bool(box.is_selected()) is default
    if default is None:
        return value == ""
    if isinstance(default, int | float):
        return value.strip() != "" and float(value) == float(default)
    return bool(value == str(default))


def test_trigger_form_submits_the_sample_dag_with_its_defaults(
    session: Any, airflow: Airflow
) -> None:
    from selenium.webdriver.common.by import By

    out = artifacts_dir()
    browser = session
    before = {r["dag_run_id"] for r in airflow.runs()}
    browser.get(f"{airflow.base}/dags/{DAG_ID}")
    _wait(browser, lambda d: _with_text(d, "button", "Trigger"))[-1].click()
    dialog = _wait(browser, lambda d: _with_text(d, "[role=dialog]", "Run Parameters", True))[0]
    assert f"Trigger Dag - {DAG_ID}" in dialog.text

    # every param is rendered with its default; the nullable ones are empty and not invalid
    defaults = _dag_defaults()
    for name, default in defaults.items():
        box, label = _field(dialog, name)
        assert _shows(box, default), (name, box.get_attribute("value"), default)
        assert box.get_attribute("aria-invalid") != "true", f"{name} is marked invalid"
        assert label is not None and label.text.split()[0] == name, name
        required = label.get_attribute("data-required") is not None
        assert required is (default is not None), f"{name}: required={required}"
    for name in NULLABLE:
        assert defaults[name] is None, name
    invalid = dialog.find_elements(By.CSS_SELECTOR, "[aria-invalid=true], [data-invalid]")
    assert not invalid, [i.get_attribute("outerHTML")[:200] for i in invalid]
    browser.save_screenshot(str(out / "airflow-trigger-form.png"))
    size = browser.get_window_size()  # the dialog scrolls: a tall window shows all of it
    browser.set_window_size(size["width"], 3600)
    browser.save_screenshot(str(out / "airflow-trigger-form-full.png"))
    browser.set_window_size(size["width"], size["height"])

    submit = _button(dialog, "Trigger")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", submit)
    browser.save_screenshot(str(out / "airflow-trigger-form-bottom.png"))
    assert submit.is_enabled(), "the Trigger button is disabled with the defaults"
    submit.click()

    new: list[dict[str, Any]] = []

    def created() -> bool:
        new[:] = [r for r in airflow.runs() if r["dag_run_id"] not in before]
        return bool(new)

    try:
        wait_for("the triggered run", created, airflow, TIMEOUT_S)
    except BaseException:
        shown = [x.text for x in _with_text(browser, "[role=dialog], [role=alert], [role=status]")]
        browser.save_screenshot(str(out / "airflow-trigger-failed.png"))
        pytest.fail(f"the form did not create a run; the page shows: {shown}")
    (run,) = new
    assert run["run_type"] == "manual" and run["triggered_by"] == "ui"
    assert run["triggering_user_name"] == USER
    assert run["conf"] == defaults  # submitted with its defaults, nulls included
    _wait(browser, lambda d: f"/dags/{DAG_ID}/runs/" in d.current_url)
    browser.save_screenshot(str(out / "airflow-triggered-run.png"))


# ----------------------------------------------------------------------- a DP release
def test_a_dp_release_in_the_airflow_ui(
    session: Any, airflow: Airflow, seeded: Seeded, tmp_path: Path
) -> None:
    """A differentially private release (recorded last: the tests above count the seeded
    releases) as Airflow serves its page: the budget, its meaning, the plot, the cells."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.steps.dp_release import DP_RELEASE
    from airflow_privacy.gate.steps.report import REPORT
    from tests.policy_setup import record_policy

    record_policy(seeded.url, "survey-dp", policy=Policy(dp={"unit": "rho", "cap": 1.0}))
    data = tmp_path / "survey.csv"
    data.write_text("sex,age\n" + "".join(f"{'MF'[i % 2]},{20 + i % 9}\n" for i in range(900)))
    (tmp_path / "sex.csv").write_text(f"M\nF\n{EVIL}\n")
    (tmp_path / "age.csv").write_text("".join(f"{a}\n" for a in range(20, 30)))
    uuid = ""
    for i in range(2):  # two releases: the plot shows the budget spent over time
        out = tmp_path / f"noisy-{i}.csv"
        env = DP_RELEASE.run(DP_RELEASE.request({
            "source": ReleaseRef(path=str(data)), "dataset": "survey-dp",
            "marginals": ["sex", "age,sex"],
            "keys": {"sex": str(tmp_path / "sex.csv"), "age": str(tmp_path / "age.csv")},
            "rho": 0.3, "out": str(out), "ledger": seeded.url,
        }), GateContext())  # fmt: skip
        assert env.attempt is not None
        asked = {"release": ReleaseRef(path=str(out)), "attempt": env.attempt.uuid,
                 "ledger": seeded.url}  # fmt: skip
        REPORT.run(REPORT.request(asked), GateContext())
        uuid = env.attempt.release_uuid
    browser = session
    browser.get(f"{airflow.base}/privacy/releases/{uuid}")
    _wait(browser, ec.presence_of_element_located((By.ID, "dp")))
    text = browser.find_element(By.ID, "dp").text
    assert "cap 1, spent 0.6 over 2 DP release(s), 0.4 left" in text
    assert "never reset" in text and "95% interval" in text
    plot = browser.find_element(By.CSS_SELECTOR, "#dp svg")
    assert plot.is_displayed() and plot.size["width"] > 50
    assert EVIL in text and browser.execute_script("return window.pwned === undefined")
    _full_page(browser, artifacts_dir() / "ui-report-dp.png")


def test_a_runs_privacy_report_tab(session: Any, airflow: Airflow) -> None:
    """The run tab (an external view on ``dag_run``): inside the run's page, the plugin's
    page for that run, here a run that opened no attempt yet (the trigger-form test's)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    runs = airflow.runs()
    if not runs:
        pytest.skip("no run of the sample DAG (the trigger-form test did not create one)")
    run_id = str(runs[0]["dag_run_id"])
    browser = session
    from airflow_privacy.providers.airflow.operators.report import run_tab

    browser.get(run_tab(DAG_ID, run_id, airflow.base))  # where the report task's link points
    frame = _wait(browser, ec.presence_of_element_located((By.TAG_NAME, "iframe")))
    assert "/privacy/runs/" in str(frame.get_attribute("src"))
    browser.switch_to.frame(frame)
    text = _wait(browser, ec.presence_of_element_located((By.TAG_NAME, "body"))).text
    assert "opened no attempt" in text or "Release report" in text
    browser.switch_to.default_content()
    browser.save_screenshot(str(artifacts_dir() / "airflow-run-privacy-tab.png"))


def test_the_ledger_pages_follow_a_dark_color_scheme(
    session: Any, airflow: Airflow, seeded: Seeded
) -> None:
    """With the browser in dark mode (Airflow's "system" theme), the ledger list, a report,
    a release's attempts and an attempt's report turn dark; the report's charts keep their
    ink on a light card."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser = session
    dark = [{"name": "prefers-color-scheme", "value": "dark"}]
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": dark})
    try:
        privacy = f"{airflow.base}/privacy"
        browser.get(f"{privacy}/")
        _wait(browser, ec.presence_of_element_located((By.ID, "releases")))
        back = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert back == "rgb(22, 25, 29)", back
        browser.save_screenshot(str(artifacts_dir() / "ui-releases-dark.png"))
        browser.get(f"{privacy}/releases/{seeded.uuid(seeded.blocked)}")
        chart = _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "svg.chart")))
        back = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        card = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor",
                                      chart)  # fmt: skip
        assert back == "rgb(22, 25, 29)" and card == "rgb(255, 255, 255)", (back, card)
        _full_page(browser, artifacts_dir() / "ui-report-blocked-dark.png")
        # a release's attempts and checks (the ledger's own view), then an attempt's report
        browser.get(f"{privacy}/releases/{seeded.uuid(seeded.published)}?view=ledger")
        link = _wait(browser, lambda d: d.find_elements(By.LINK_TEXT, "its release report"))[0]
        back = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert back == "rgb(22, 25, 29)", back
        _full_page(browser, artifacts_dir() / "ui-attempts-dark.png")
        link.click()
        _wait(browser, lambda d: "/privacy/attempts/" in d.current_url)
        _wait(browser, ec.presence_of_element_located((By.CLASS_NAME, "privacy-nav")))
        back = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert back == "rgb(22, 25, 29)", back
        _full_page(browser, artifacts_dir() / "ui-attempt-report-dark.png")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_the_dashboard_widget_on_airflows_home(
    session: Any, airflow: Airflow, seeded: Seeded
) -> None:
    """Airflow's Home page imports the plugin's dashboard module (``react_apps``,
    destination ``dashboard``) and renders its component: a frame of the widget page with
    the releases blocked (linked) and the last publication per dataset."""
    from selenium.webdriver.common.by import By

    browser = session
    browser.get(f"{airflow.base}/")
    frame = _wait(browser, lambda d: [
        f for f in d.find_elements(By.TAG_NAME, "iframe")
        if "/privacy/widget" in str(f.get_attribute("src"))
    ])[0]  # fmt: skip
    browser.execute_script("arguments[0].scrollIntoView()", frame)
    browser.save_screenshot(str(artifacts_dir() / "airflow-home-privacy-widget.png"))
    browser.switch_to.frame(frame)
    try:
        text = _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").text)
        assert "blocked" in text and "Last publication per dataset" in text, text
        links = [a.get_attribute("href") for a in browser.find_elements(By.TAG_NAME, "a")]
        assert any(str(h).endswith(f"/privacy/releases/{seeded.uuid(seeded.blocked)}")
                   for h in links), links  # fmt: skip
        assert browser.execute_script("return window.pwned === undefined")
    finally:
        browser.switch_to.default_content()


def test_the_pages_follow_airflows_own_theme(
    session: Any, airflow: Airflow, seeded: Seeded
) -> None:
    """The system prefers light, the user picks Airflow's dark theme: the ledger view inside
    Airflow (Browse -> Privacy ledger, an iframe) and the dashboard widget turn dark, and
    back to light when the user switches back, without a reload."""
    from selenium.webdriver.common.by import By

    browser = session
    light = [{"name": "prefers-color-scheme", "value": "light"}]
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": light})

    def background_in(frame_src: str) -> str:
        frame = _wait(browser, lambda d: [
            f for f in d.find_elements(By.TAG_NAME, "iframe")
            if frame_src in str(f.get_attribute("src"))
        ])[0]  # fmt: skip
        browser.switch_to.frame(frame)
        try:
            _wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
            return str(
                browser.execute_script("return getComputedStyle(document.body).backgroundColor")
            )
        finally:
            browser.switch_to.default_content()

    try:
        browser.get(f"{airflow.base}/")
        browser.execute_script("localStorage.setItem('theme', 'dark')")
        browser.get(f"{airflow.base}/plugin/privacy-ledger")
        _wait(browser, lambda d: "dark" in str(d.execute_script(
            "return document.documentElement.className")))  # fmt: skip
        assert _wait(browser, lambda d: background_in("/privacy/") == "rgb(22, 25, 29)")
        browser.save_screenshot(str(artifacts_dir() / "airflow-privacy-ledger-dark.png"))
        browser.get(f"{airflow.base}/")
        assert _wait(browser, lambda d: background_in("/privacy/widget") == "rgb(22, 25, 29)")
        browser.save_screenshot(str(artifacts_dir() / "airflow-home-privacy-widget-dark.png"))
        runs = airflow.runs()
        if runs:  # the run tab (the trigger-form test's run)
            from airflow_privacy.providers.airflow.operators.report import run_tab

            browser.get(run_tab(DAG_ID, str(runs[0]["dag_run_id"]), airflow.base))
            assert _wait(browser, lambda d: background_in("/privacy/runs/") == "rgb(22, 25, 29)")
            browser.save_screenshot(str(artifacts_dir() / "airflow-run-privacy-tab-dark.png"))
            browser.get(f"{airflow.base}/")
            assert _wait(browser, lambda d: background_in("/privacy/widget") == "rgb(22, 25, 29)")
        # switched back in place, as Airflow's theme menu does (its stored choice and its
        # class, once the page has applied the dark one): the frame follows
        browser.execute_script(
            "localStorage.setItem('theme', 'light');"
            "document.documentElement.classList.remove('dark');"
            "document.documentElement.classList.add('light');"
        )
        assert _wait(browser, lambda d: background_in("/privacy/widget") == "rgb(255, 255, 255)")
    finally:
        browser.execute_script("localStorage.removeItem('theme')")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_signing_in_from_a_deep_link_comes_back_to_it(
    session: Any, airflow: Airflow, seeded: Seeded
) -> None:
    """Signed out, a deep link to a report says to sign in; the sign-in round trip ends on
    that report, not on Airflow's home (the last test of the module: it signs in again)."""
    from selenium.webdriver.common.by import By

    browser = session
    browser.delete_all_cookies()
    deep = f"{airflow.base}/privacy/releases/{seeded.uuid(seeded.blocked)}"
    browser.get(deep)
    _wait(browser, lambda d: d.find_elements(By.ID, "sign-in"))[0].click()
    _wait(browser, lambda d: d.find_elements(By.NAME, "password"))
    browser.find_element(By.NAME, "username").send_keys(USER)
    browser.find_element(By.NAME, "password").send_keys(airflow.password)
    _button(browser, "Sign in").click()
    _wait(browser, lambda d: d.current_url.rstrip("/") == deep)
    assert "BLOCKED" in browser.find_element(By.TAG_NAME, "body").text.upper()
    browser.save_screenshot(str(artifacts_dir() / "ui-deep-link-after-sign-in.png"))


# --------------------------------------------------------------------------- no browser
@pytest.mark.parametrize("ci", [False, True])
def test_missing_chromium_skips_locally_and_fails_under_ci(
    ci: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = sys.modules[__name__]  # this module: its IN_CI and _binaries

    monkeypatch.setattr(me, "IN_CI", ci)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(Path, "exists", lambda self: False)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match="chromium-driver"):
        me._binaries()


def _rest(airflow: Airflow, method: str, path: str, body: Any = None) -> Any:
    """One REST call as the admin (``Airflow.request`` only GETs and POSTs)."""
    return airflow.call(method, path, body)


def test_a_steward_answers_a_supersede_asked_on_the_command_line(
    session: Any, airflow: Airflow
) -> None:
    """The shipped ``privacy_steward_decisions`` DAG in Airflow's UI: alice asked on the
    command line to set a blocked attempt aside; the steward (the admin here) opens the run's
    required action, reads who asked and why with the block's reason, answers "Set it aside"
    with a reason in the form, and the ledger records both people."""
    from selenium.webdriver.common.by import By

    from airflow_privacy.cli import main
    from airflow_privacy.ledger import ReleaseLedger
    from tests.ledger.support import sample
    from tests.policy_setup import record_policy

    dag = "privacy_steward_decisions"
    url = f"sqlite:///{airflow.home / 'privacy_ledger.db'}"  # the tasks' default ledger
    record_policy(url, "asked-ui")
    with ReleaseLedger(url) as db:
        opened = db.open_attempt("asked-ui", sample(), required=["check"], first_release=True)
        db.block(opened.uuid, ["k-anonymity: 3 groups below k = 5"], by="gate")
    assert main(["ledger", "supersede", opened.uuid, "--by", "alice", "--reason",
                 "the month was loaded twice", "--ledger", url, "--quiet"]) == 1  # fmt: skip
    wait_for(f"{dag} parsed", lambda: bool(_rest(airflow, "GET", f"/api/v2/dags/{dag}")), airflow,
             TIMEOUT_S)  # fmt: skip
    _rest(airflow, "PATCH", f"/api/v2/dags/{dag}", {"is_paused": False})
    body = {"logical_date": None, "conf": {"attempt": opened.uuid}}
    run = str(_rest(airflow, "POST", f"/api/v2/dags/{dag}/dagRuns", body)["dag_run_id"])
    task = f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/decide"
    wait_for("the steward's task waiting, its worker gone", lambda: (
        _rest(airflow, "GET", task)["state"] == "awaiting_input"
        and airflow.parked(dag, run, "decide")
    ), airflow, TIMEOUT_S)  # fmt: skip
    browser = session
    browser.get(f"{airflow.base}/dags/{dag}/runs/{run}/tasks/decide/required_actions")
    _wait(browser, lambda d: "alice asked for a supersede" in d.find_element(
        By.TAG_NAME, "body").text)  # fmt: skip
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "the month was loaded twice" in text and "k-anonymity" in text
    assert "Set this blocked release aside?" in text
    browser.save_screenshot(str(artifacts_dir() / "airflow-steward-decision.png"))
    reason = _wait(
        browser,
        lambda d: d.find_elements(
            By.CSS_SELECTOR, "textarea, input[name='reason'], input[id*='reason']"
        ),
    )
    reason[0].send_keys("agreed: loaded twice")
    _button(browser, "Set it aside (supersede)").click()

    def finished() -> bool:
        state = _rest(airflow, "GET", f"/api/v2/dags/{dag}/dagRuns/{run}")["state"]
        return str(state) in ("success", "failed")

    wait_for(f"run {run}", finished, airflow, TIMEOUT_S)
    browser.save_screenshot(str(artifacts_dir() / "airflow-steward-decided.png"))
    assert _rest(airflow, "GET", f"/api/v2/dags/{dag}/dagRuns/{run}")["state"] == "success"
    with ReleaseLedger(url, create=False) as db:
        decided = db.attempt(opened.uuid)
    assert decided.status == "superseded" and decided.override is not None
    assert (decided.override["requested_by"], decided.override["decided_by"]) == (
        "alice", USER,
    )  # fmt: skip
    assert decided.override["decision_reason"] == "agreed: loaded twice"
