"""The papers the pipeline rebuilds: one registry line each, read by every place that needs the
list (the params schema, the forecast, the site and its metrics, the reports, ``make exps``, the
errata, the tests).

A paper has one name in code, its :attr:`Paper.key`: the key of its params section and of its
folders and files (``data/<key>/``, ``reports/<key>.html``, ``reports/claims/<key>.json``). The
registry gives what is derived from it: the package that holds its science (``tms.<package>``),
the prefix of its DVC stages, its short name in narrow tables and its title.

Adding a paper: its package (params, science, claims, errata, forecast), its stages in dvc.yaml,
its params section, its report notebook, and one line in :data:`PAPERS`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Paper:
    """One paper: ``key`` (params section, folder and file names), ``package`` (``tms.<package>``),
    ``prefix`` (its DVC stages' names start with it), ``short`` (a table column), ``title``."""

    key: str
    package: str
    prefix: str
    short: str
    title: str

    @property
    def claims(self) -> str:
        """Its claims file (tms.core.claim_rows.export), relative to the repository root."""
        return f"reports/claims/{self.key}.json"

    @property
    def report(self) -> str:
        """Its report page, relative to the repository root."""
        return f"reports/{self.key}.html"

    def module(self, name: str) -> ModuleType:
        """Its module ``tms.<package>.<name>`` (e.g. ``params``, ``forecast``, ``errata``),
        imported. Raises ModuleNotFoundError if the package has none."""
        return importlib.import_module(f"tms.{self.package}.{name}")


#: The papers, in the order of the params file, the site, the README and the reports.
PAPERS: tuple[Paper, ...] = (
    Paper("persian_rug", "persian_rug", "pr_", "PR",
          "The Persian Rug: solving toy models of superposition using large-scale symmetries"),
    Paper("incidental_polysemanticity", "incidental", "ip_", "IP",
          "Incidental polysemanticity: a new obstacle for mechanistic interpretability"),
    Paper("autoencoding_notes", "notes", "notes_", "notes", "Notes on toy autoencoding"),
)
#: Their keys, in :data:`PAPERS` order.
KEYS: tuple[str, ...] = tuple(p.key for p in PAPERS)


def paper(key: str) -> Paper:
    """The registry line of the paper with params key ``key``. Raises KeyError naming the keys
    there are."""
    for p in PAPERS:
        if p.key == key:
            return p
    raise KeyError(f"no paper {key!r}: the papers are {', '.join(KEYS)}")


def of_package(package: str) -> Paper:
    """The registry line of the paper whose science is ``tms.<package>`` (a module's
    ``__package__`` or ``__name__`` works too). Raises KeyError."""
    name = package.removeprefix("tms.").split(".")[0]
    for p in PAPERS:
        if p.package == name:
            return p
    raise KeyError(f"no paper in package {package!r}")
