"""The report cells' figure helper: image, data and caption, with the anchor the site links to."""

import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

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
    # the page shows the caption once: the image as drawn before the stamp, which the files
    # carry (a caption line more: taller)
    heights = [struct.unpack(">I", png[20:24])[0] for png in (image.data, written[0]["fig9.png"])]
    assert image.data != written[0]["fig9.png"] and heights[0] < heights[1]
    assert not plt.get_fignums()                               # the figure is closed


def test_stamp_writes_the_caption_under_the_figure_wrapped_to_its_width():
    fig, ax = plt.subplots(figsize=(4, 3))
    text = "Trained at n_s = 128, `single`, " + "p = 0.1, " * 20
    cells.stamp(fig, "Figure 2", text)
    stamped = fig.texts[-1]
    lines = stamped.get_text().split("\n")
    assert lines[0].startswith("Figure 2. Trained at n_s = 128, single,")      # no backticks
    assert len(lines) > 1 and max(map(len, lines)) <= 4 * 17
    assert stamped.get_position()[1] == 0.0 and stamped.get_va() == "top"    # under the axes
    plt.close(fig)
