"""The built reports in headless Chromium: contents, maths, hidden code and the claim links.

Reads the pages the smoke profile's pipeline built (tests/conftest.py: smoke_repo); skipped where
Chromium is missing.
"""

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tms.core.papers import KEYS as PAPERS
from tms.reporting import browser

pytestmark = [
    pytest.mark.skipif(None in browser.executables(), reason=browser.MISSING),
]

# Every link of the contents, and whether its target exists; every <math> and its drawn width.
_CONTENTS = """return Array.from(document.querySelectorAll('#toc a')).map(
    a => [a.getAttribute('href'), !!document.getElementById(a.hash.slice(1))
          || !!document.getElementById(decodeURIComponent(a.hash.slice(1)))]);"""
_MATHS = "return Array.from(document.querySelectorAll('math')).map(m => m.getBoundingClientRect().width);"
_CODE_SHOWN = """return Array.from(document.querySelectorAll('.jp-CodeCell > .jp-Cell-inputWrapper'))
    .filter(e => e.offsetParent !== null).length;"""
_TARGET = """const e = document.getElementById(arguments[0]);
return e && [e.getBoundingClientRect().top, window.innerHeight, window.scrollY];"""


@pytest.fixture(scope="module")
def reports(smoke_repo) -> Path:
    return smoke_repo[0] / "reports"


@pytest.fixture(scope="module")
def driver():
    with browser.chromium() as d:
        yield d


@pytest.mark.parametrize("paper", PAPERS)
def test_report_has_contents_maths_hidden_code_and_back_link(driver, reports, paper):
    page = (reports / f"{paper}.html").resolve()
    assert browser.problems(driver, page) == []
    contents = driver.execute_script(_CONTENTS)
    assert len(contents) >= 3 and all(found for _, found in contents), contents
    assert driver.find_element("css selector", "#back-to-index").get_attribute("href") \
        == (reports / "index.html").resolve().as_uri()
    text = driver.find_element("tag name", "body").text
    assert "$\\" not in text                                     # no raw TeX left
    if paper == "persian_rug":                                   # its figs. 6 and 7 captions
        widths = driver.execute_script(_MATHS)
        assert widths and min(widths) > 0, widths
    assert driver.execute_script(_CODE_SHOWN) == 0
    driver.find_element("css selector", "label[for=show-code]").click()
    assert driver.execute_script(_CODE_SHOWN) > 0


def test_a_claim_link_of_the_index_scrolls_to_its_figure_in_the_report(driver, reports):
    driver.get((reports / "index.html").resolve().as_uri())
    links = [a.get_attribute("href") for a in
             driver.find_elements("css selector", "#claims-table a.claim-link")]
    assert links and all(urlsplit(h).fragment for h in links)
    href = next(h for h in links if "#figure-" in h)
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(href)
    fragment = urlsplit(href).fragment

    def scrolled_to_target(d):                    # the scroll may land after the load event
        found = d.execute_script(_TARGET, fragment)
        return found if found and found[2] > 0 and 0 <= found[0] < found[1] / 2 else None

    try:
        WebDriverWait(driver, 10).until(scrolled_to_target)
    except TimeoutException:
        found = driver.execute_script(_TARGET, fragment)
        assert found, f"no element with id {fragment} in {href}"
        top, height, scrolled = found
        pytest.fail(f"{href}: scrolled to {scrolled}, its target's top at {top} of a "
                    f"{height}-pixel window (expected scrolled > 0, top in the upper half)")


def test_the_claims_table_filters_by_paper(driver, reports):
    driver.get((reports / "index.html").resolve().as_uri())
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "filter-paper")).select_by_value("persian_rug")
    shown = driver.execute_script("""return Array.from(document.querySelectorAll(
        '#claims-table tbody tr')).filter(r => !r.hidden).map(r => r.dataset.paper);""")
    assert shown and set(shown) == {"persian_rug"}
