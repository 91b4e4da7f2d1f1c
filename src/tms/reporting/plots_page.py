"""The page template of ``dvc plots show`` and ``dvc plots diff`` (``plots.html_template`` in
.dvc/config): Vega, Vega-Lite and Vega-Embed inlined, so that the page draws its plots offline,
wherever DVC writes it (``dvc_plots/`` or ``-o``).

The libraries are the npm packages pinned by package.json and package-lock.json, installed by
``npm ci`` into node_modules/ (``make plots-page``). The page carries the licence of every
package installed with them, in a comment ahead of the scripts; the packages of the vega/vega
repository ship none, so theirs is reports/templates/plots/vega.LICENSE. Without node_modules
the page says so above the plots instead of drawing nothing. The plots are drawn as SVG.

    python -m tms.reporting.plots_page            # writes reports/templates/plots/page.html
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from tms.core.io import atomic_path

#: Where the page is written, relative to the repository (.dvc/config names it).
PAGE = "reports/templates/plots/page.html"
#: The browser build of each library, in the order the page loads them.
LIBRARIES = {"vega": "build/vega.min.js", "vega-lite": "build/vega-lite.min.js",
             "vega-embed": "build/vega-embed.min.js"}
VEGA_LICENSE = "reports/templates/plots/vega.LICENSE"
#: What DVC replaces in the template (dvc_render.html): it must not occur in what is inlined.
PLACEHOLDERS = ("{plot_divs}", "{scripts}", "{refresh_tag}")

# DVC's divs call vegaEmbed(element, spec): SVG keeps the plots sharp at any zoom.
_SVG = ("window.vegaEmbed = (embed => (el, spec, opt) => embed(el, spec, "
        "{renderer: 'svg', ...opt}))(window.vegaEmbed);")
_MISSING = ("<p style=\"color: #b00020; font-weight: bold\">The plots below are not drawn: "
            "Vega, Vega-Lite and Vega-Embed are not installed (node_modules/). Run "
            "<code>make plots-page</code> in the repository (it needs npm), then "
            "<code>dvc plots show</code> again.</p>")


def _meta(folder: Path) -> dict:
    return json.loads((folder / "package.json").read_text(encoding="utf8"))


def _licence_text(root: Path, folder: Path) -> str:
    files = sorted(p for p in folder.iterdir() if re.fullmatch(r"(?i)licen[cs]e(\..*)?", p.name))
    if files:
        return "\n".join(p.read_text(encoding="utf8").strip() for p in files)
    meta = _meta(folder)
    repository = meta.get("repository")
    url = repository.get("url", "") if isinstance(repository, dict) else repository or ""
    if re.search(r"(^|github\.com/)vega/vega(\.git)?$", url):
        return (root / VEGA_LICENSE).read_text(encoding="utf8").strip()
    return f"{meta.get('license', 'no licence named')} (the package ships no licence text)"


def licences(root: Path) -> str:
    """Every package of package-lock.json that npm installed (optional ones aside), as
    ``name@version`` lines above the text of their licence, one block per distinct text."""
    packages = json.loads((root / "package-lock.json").read_text(encoding="utf8"))["packages"]
    by_text: dict[str, list[str]] = {}
    for key, meta in sorted(packages.items()):
        if not key or meta.get("optional"):
            continue
        name = key.rsplit("node_modules/", 1)[1]
        by_text.setdefault(_licence_text(root, root / key), []).append(
            f"{name}@{meta['version']}")
    return "\n\n".join("\n".join(names) + "\n\n" + text for text, names in by_text.items())


def _checked(text: str, where: str, closing: str) -> str:
    if re.search(re.escape(closing), text, re.IGNORECASE) or any(p in text for p in PLACEHOLDERS):
        raise ValueError(f"{where} holds {closing} or a DVC placeholder: it cannot be inlined")
    return text


def installed(root: Path) -> bool:
    """Whether Vega, Vega-Lite and Vega-Embed are installed under ``root``/node_modules."""
    return all((root / "node_modules" / name / build).is_file()
               for name, build in LIBRARIES.items())


def page(root: Path) -> str:
    """The HTML template: the libraries of ``root``/node_modules inlined with their licences,
    or, where they are not installed, a notice that says how to install them."""
    modules = root / "node_modules"
    if installed(root):
        versions = ", ".join(f"{name} {_meta(modules / name)['version']}" for name in LIBRARIES)
        head = (f"<!--\nInlined below: {versions} (npm; package-lock.json), with the licences "
                f"of the packages installed with them.\n\n"
                f"{_checked(licences(root), 'a licence', '-->')}\n-->\n")
        head += "".join(
            f"<script>\n{_checked((modules / n / b).read_text(encoding='utf8'), n, '</script')}"
            f"\n</script>\n" for n, b in LIBRARIES.items())
        head += f"<script>{_SVG}</script>\n"
        notice = ""
    else:
        head, notice = "", _MISSING + "\n"
    return ("<!DOCTYPE html>\n<html>\n<head>\n{refresh_tag}\n<meta charset=\"utf-8\">\n"
            "<title>DVC Plot</title>\n" + head +
            "<style>\ntable { border-spacing: 15px; }\n</style>\n</head>\n<body>\n" + notice +
            "{plot_divs}\n</body>\n</html>\n")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=PAGE, help=f"the page to write ({PAGE})")
    ap.add_argument("--root", default=".", help="the repository (package-lock.json, "
                                                "node_modules/)")
    args = ap.parse_args(argv)
    text = page(Path(args.root))
    with atomic_path(args.out) as tmp:      # make trusts the file's time: never a half page
        tmp.write_text(text, encoding="utf8")
    if not installed(Path(args.root)):
        print(f"{args.out}: Vega, Vega-Lite and Vega-Embed are not installed (npm ci): "
              "dvc plots show writes pages that say so and draw no plot", file=sys.stderr)
    else:
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
