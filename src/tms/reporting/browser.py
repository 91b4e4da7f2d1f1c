"""Load report pages in headless Chromium and list what is broken; screenshot a page.

Uses Debian's ``chromium`` and ``chromium-driver`` through Selenium (given the driver's path,
so Selenium downloads nothing). A page is broken if an image does not load, a link points to
a missing file or a missing anchor, a link leaves the machine, or the console logs an error
(a script error, a resource that failed to load).

    python -m tms.reporting.browser reports/index.html reports/*.html --screenshot reports/index.png
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

_BROKEN_IMAGES = """return Array.from(document.images)
    .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.currentSrc || i.src);"""
_LINKS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"
_IDS = "return Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name);"
# Table cells whose content runs out of them (over the next column): a formula or a word wider
# than the cell; content that scrolls inside its own box does not count.
_OVERFLOWING = """return Array.from(document.querySelectorAll('td, th'))
    .filter(c => c.offsetParent !== null && c.scrollWidth > c.clientWidth + 1)
    .map(c => [(c.closest('table').id || 'a table'), c.scrollWidth - c.clientWidth,
               c.textContent.trim().replace(/\\s+/g, ' ').slice(0, 50)]);"""


#: Why a browser test is skipped where Chromium is missing, and how to get it.
MISSING = ("chromium and chromedriver are not installed: `make browser` installs them (Debian "
           "packages, about a minute)")


def executables() -> tuple[str | None, str | None]:
    """Paths of the ``chromium`` and ``chromedriver`` executables (None where missing)."""
    return shutil.which("chromium"), shutil.which("chromedriver")


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator:
    """A headless Chromium WebDriver collecting console messages. Raises FileNotFoundError if
    chromium or chromedriver is not installed (:data:`MISSING`: ``make browser``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = executables()
    if browser is None or driver_path is None:
        raise FileNotFoundError(MISSING)
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


def _link_problem(href: str, page: Path, ids: set[str]) -> str | None:
    url = urlsplit(href)
    if url.scheme in ("mailto", "data", "javascript"):
        return None
    if url.scheme != "file":
        return f"link leaves the machine: {href}"
    target = Path(unquote(url.path))
    if not target.exists():
        return f"link to a missing file: {href}"
    # the HTML standard tries the fragment as written, then percent-decoded
    if url.fragment and target.resolve() == page.resolve() and \
            not {url.fragment, unquote(url.fragment)} & ids:
        return f"link to a missing anchor: {href}"
    return None


def problems(driver, page: str | Path) -> list[str]:
    """Load ``page`` (a local HTML file) in ``driver`` and return what is broken on it (empty:
    nothing): an image that does not load, a link to a missing file or anchor or off the
    machine, a script error, a table cell whose content runs out of it."""
    page = Path(page).resolve()
    driver.get(page.as_uri())                  # returns once the page has loaded
    out = [f"broken image: {src}" for src in driver.execute_script(_BROKEN_IMAGES)]
    ids = set(driver.execute_script(_IDS))
    out += [p for href in sorted(set(driver.execute_script(_LINKS)))
            if (p := _link_problem(href, page, ids))]
    out += [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser")
            if e["level"] in ("SEVERE", "ERROR")]
    out += [f"content {wide} px wider than its cell in {table}: {text!r}"
            for table, wide, text in driver.execute_script(_OVERFLOWING)]
    return [f"{page.name}: {p}" for p in out]


def layout(driver, page: str | Path, width: int = 1280, height: int = 800,
           anchor: str = "answer") -> dict:
    """How ``page`` lays out in a ``width`` × ``height`` window: ``overflow``, the pixels it is
    wider than the window (0: no horizontal scroll), and ``anchor_top``, the top of the element
    of id ``anchor`` (None without one): within ``height``, it is above the fold."""
    driver.set_window_size(width, height)
    driver.get(Path(page).resolve().as_uri())
    return driver.execute_script(
        "const d = document.documentElement, a = document.getElementById(arguments[0]);"
        "return {overflow: Math.max(0, d.scrollWidth - d.clientWidth),"
        " anchor_top: a ? a.getBoundingClientRect().top : null};", anchor)


def screenshot(driver, page: str | Path, path: str | Path) -> Path:
    """A PNG of the whole of ``page`` (its full height) written to ``path``."""
    driver.get(Path(page).resolve().as_uri())
    height = driver.execute_script("return document.documentElement.scrollHeight")
    width = driver.get_window_size()["width"]
    driver.set_window_size(width, min(int(height) + 100, 16000))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    return Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+", help="HTML files to check")
    ap.add_argument("--screenshot", help="PNG of the first page to write")
    args = ap.parse_args(argv)
    with chromium() as driver:
        found = [p for page in args.pages for p in problems(driver, page)]
        if args.screenshot:
            print(f"wrote {screenshot(driver, args.pages[0], args.screenshot)}")
    print("\n".join(found) if found else f"{len(args.pages)} page(s): nothing broken")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
