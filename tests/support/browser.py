"""Debian's headless chromium driven by selenium and /usr/bin/chromedriver (`make browser` installs both)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)

# What a page reports once Dash has rendered it: no callback pending, the title set, the content there,
# every chart drawn by plotly.js.
_RENDERED = """
const page = document.getElementById('page');
const title = document.getElementById('page-title');
const loading = document.querySelector('[data-dash-is-loading="true"]');
const graphs = Array.from(document.querySelectorAll('.dash-graph'));
const drawn = graphs.every(g => { const p = g.querySelector('.js-plotly-plot'); return p && p.data; });
return Boolean(page && page.children.length && title && title.textContent && !loading && drawn);
"""

# Every Plotly chart of the page: its id and how many points each of its traces has.
CHART_POINTS = """
return Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => ({
  id: el.parentElement ? el.parentElement.id || el.id : el.id,
  traces: (el.data || []).map(t => Math.max((t.x || []).length, (t.y || []).length, (t.values || []).length)),
}));
"""


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="dashboard-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            yield driver
        finally:
            driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)  # the profile is the test's own: none left in /tmp


def open_page(driver: webdriver.Chrome, url: str, timeout: float = 60.0) -> None:
    """Load `url` and wait until Dash has rendered the page (and settled: no callback still pending)."""
    driver.get(url)
    wait_rendered(driver, timeout)


def wait_rendered(driver: webdriver.Chrome, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    settled = 0
    while time.monotonic() < deadline:
        settled = settled + 1 if driver.execute_script(_RENDERED) else 0
        if settled >= 3:  # three checks in a row: a second render would show as loading in between
            return
        time.sleep(0.3)
    raise TimeoutError(f"{driver.current_url} did not render in {timeout}s")


def console_errors(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """The browser console's errors since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def charts(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    return list(driver.execute_script(CHART_POINTS))


def text(driver: webdriver.Chrome, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).text)


def screenshot(driver: webdriver.Chrome, path: Path) -> Path:
    """A screenshot of the whole page, beyond the window (Chrome DevTools' captureBeyondViewport)."""
    import base64

    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics["contentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 8000), "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
    return path
