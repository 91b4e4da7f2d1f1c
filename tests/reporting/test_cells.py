"""The report cells' figure helper: image, data and caption, with the anchor the site links to."""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from tms.reporting import anchors, cells  # noqa: E402


def test_caption_anchors_the_figure_and_links_its_data():
    text = cells.caption("fig2", "Figure 2", "n_s = 64, p = 0.1.", "figures/p/fig2.csv")
    assert text.startswith(f'<a id="{anchors.figure("fig2")}"></a>**Figure 2.** n_s = 64')
    assert text.endswith("(figures/p/fig2.csv)")


def test_figure_writes_image_and_data_byte_stable(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(cells, "display", shown.append)
    figures_dir = tmp_path / "reports/figures/p"
    data = pd.DataFrame({"p": [0.1, 1 / 3], "loss": [1e-9, 2.0]})
    written = []
    for _ in range(2):
        fig, ax = plt.subplots()
        ax.plot(data.p, data.loss)
        cells.figure(fig, figures_dir, "fig9", "Figure 9", "n_s = 8.", data)
        written.append({p.name: p.read_bytes() for p in sorted(figures_dir.iterdir())})
    assert written[0] == written[1]
    assert sorted(written[0]) == ["fig9.csv", "fig9.png", "fig9.svg"]
    assert written[0]["fig9.csv"] == b"p,loss\n0.1,1e-09\n0.3333333333,2\n"
    caption, image = shown[:2]                                 # the caption, then the image
    assert "(figures/p/fig9.csv)" in caption.data and "n_s = 8." in caption.data
    # the page shows the caption once: the PNG's rows above the stamp, which the files carry
    # (a caption line more: taller), the same pixels
    with Image.open(io.BytesIO(image.data)) as top, \
            Image.open(io.BytesIO(written[0]["fig9.png"])) as whole:
        assert top.width == whole.width and 0.5 * whole.height < top.height < whole.height
        assert top.tobytes() == whole.crop((0, 0, whole.width, top.height)).tobytes()
        under = whole.crop((0, top.height, whole.width, whole.height)).convert("L")
        assert under.getextrema()[0] < 128                     # the stamp's text, under it
    assert not plt.get_fignums()                               # the figure is closed


def test_the_stamp_goes_under_what_the_figure_draws_below_its_edge(tmp_path, monkeypatch):
    # a label drawn below the figure's bottom edge stays in the image shown, above the stamp
    shown = []
    monkeypatch.setattr(cells, "display", shown.append)
    tops = []
    for low in (False, True):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0, 1])
        if low:
            fig.text(0.5, -0.2, "drawn low", va="top")
        cells.figure(fig, tmp_path / "reports/figures/p", "fig", "Figure", "n_s = 8.",
                     pd.DataFrame({"x": [0]}))
        with Image.open(io.BytesIO(shown[-1].data)) as image:
            tops.append(image.height)
    assert tops[1] > tops[0] + 0.2 * 3 * 150 * 0.9             # 0.2 of 3 inches, at 150 dpi


def test_stamp_writes_the_caption_under_the_figure_wrapped_to_its_width():
    fig, ax = plt.subplots(figsize=(4, 3))
    text = "Trained at n_s = 128, `single`, " + "p = 0.1, " * 20
    cells.stamp(fig, "Figure 2", text)
    stamped = fig.texts[-1]
    lines = stamped.get_text().split("\n")
    assert lines[0].startswith("Figure 2. Trained at n_s = 128, single,")      # no backticks
    assert len(lines) > 1 and max(map(len, lines)) <= 4 * 17
    assert stamped.get_position()[1] == 0.0 and stamped.get_va() == "top"    # under the axes
    cells.stamp(fig, "Figure 2", text, top=-0.6)                # 0.6 inches lower: a fifth of 3
    assert fig.texts[-1].get_position()[1] == pytest.approx(-0.2)
    plt.close(fig)
