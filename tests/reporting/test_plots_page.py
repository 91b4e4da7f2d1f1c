"""The page of ``dvc plots show`` (tms.reporting.plots_page): the libraries inlined with their licences, a
notice where they are not installed, and every plot drawn with the network off."""

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from tms.reporting import plots_page
from tms.reporting import browser

DVC = [sys.executable, "-m", "dvc"]
PLOTS = ("pr_fig2_loss", "ip_collisions", "ip_fourth_norms")
# per plot div: the stroke colour and dash of every line Vega drew (its SVG marks)
_LINES = """return Object.fromEntries(Array.from(document.querySelectorAll('body > div[id]'))
    .map(div => [div.id, Array.from(div.querySelectorAll('svg g.mark-line path'))
        .map(p => `${p.getAttribute('stroke')} ${p.getAttribute('stroke-dasharray')}`)]));"""


def _package(root, name, version, script=None, licence=None, **meta):
    folder = root / "node_modules" / name
    (folder / "build").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version, **meta}))
    if script is not None:
        (folder / plots_page.LIBRARIES[name]).write_text(script)
    if licence is not None:
        (folder / "LICENSE").write_text(licence)
    return f"node_modules/{name}", {"version": version, "license": meta.get("license")}


def test_page_inlines_the_libraries_with_their_licences(tmp_path, root):
    missing = plots_page.page(tmp_path)                     # nothing installed
    assert "make plots-page" in missing and "<script" not in missing
    assert "{plot_divs}" in missing and "{refresh_tag}" in missing
    (tmp_path / plots_page.VEGA_LICENSE).parent.mkdir(parents=True)
    shutil.copy(root / plots_page.VEGA_LICENSE, tmp_path / plots_page.VEGA_LICENSE)
    packages = dict([
        _package(tmp_path, "vega", "5.0.1", "var vega = 1;", license="BSD-3-Clause",
                 repository={"type": "git", "url": "https://github.com/vega/vega.git"}),
        _package(tmp_path, "vega-lite", "5.0.2", "var vegaLite = 2;", "IDL licence"),
        _package(tmp_path, "vega-embed", "6.0.3", "var vegaEmbed = 3;", "IDL licence"),
        _package(tmp_path, "tiny", "0.1.0", license="MIT")])
    (tmp_path / "package-lock.json").write_text(json.dumps({"packages": {"": {}, **packages}}))
    page = plots_page.page(tmp_path)
    assert page == plots_page.page(tmp_path) and "make plots-page" not in page
    assert page.index("var vega = 1") < page.index("var vegaLite") < page.index("var vegaEmbed")
    licences = page[page.index("<!--"):page.index("-->")]
    assert "tiny@0.1.0\n\nMIT (the package ships no licence text)" in licences
    assert "vega-embed@6.0.3\nvega-lite@5.0.2\n\nIDL licence" in licences
    assert "vega@5.0.1\n\n" + (root / plots_page.VEGA_LICENSE).read_text().strip() in licences
    assert page.index("-->") < page.index("<script>") and "<script src" not in page
    (tmp_path / "node_modules/vega-embed/build/vega-embed.min.js").write_text("'</script>'")
    with pytest.raises(ValueError, match="vega-embed holds </script"):
        plots_page.page(tmp_path)


@pytest.fixture
def plots_repo(tmp_path, root):
    """A git repository with the project's DVC config, plot definitions, templates and plots
    CSVs, and the page that make plots-page writes (from the repository's node_modules)."""
    if not plots_page.installed(root):
        pytest.skip("Vega, Vega-Lite and Vega-Embed are not installed (make plots-page needs npm)")
    repo = tmp_path / "repo"
    for item in ["dvc.yaml", "params.yaml", ".dvcignore", ".dvc/config", "reports/templates/plots",
                 *(f"reports/plots/{name}.csv" for name in PLOTS)]:
        (repo / item).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (root / item).is_dir() else shutil.copy2)(root / item, repo / item)
    (repo / plots_page.PAGE).write_text(plots_page.page(root))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


@pytest.mark.integration
def test_dvc_plots_show_draws_every_plot_offline(plots_repo, tmp_path):
    if None in browser.executables():
        pytest.skip(browser.MISSING)
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "elsewhere"                           # not dvc_plots/ beside .dvc
    run = subprocess.run(DVC + ["plots", "show", "-o", str(out)], cwd=plots_repo,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    with browser.chromium() as driver:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        driver.get((out / "index.html").as_uri())
        try:                                   # Vega draws after the page loaded (late when busy)
            WebDriverWait(driver, 120).until(
                lambda d: (lines := d.execute_script(_LINES)) and all(lines.values()))
        except TimeoutException:
            pass
        lines = driver.execute_script(_LINES)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert sorted(lines) == sorted(f"reports_plots_{name}_csv" for name in PLOTS)
    assert all(lines.values()), f"plots without a line: {[k for k, v in lines.items() if not v]}"
    fig2 = lines["reports_plots_pr_fig2_loss_csv"]
    series = pd.read_csv(plots_repo / "reports/plots/pr_fig2_loss.csv").series.nunique()
    assert len(fig2) == series == len(set(fig2)), f"{series} series in {len(set(fig2))} styles"
