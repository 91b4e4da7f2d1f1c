"""Claims as data: what a paper states (:class:`Claim`), what we measured, and the verdict.

Each paper's claims module declares its claims once, in a :class:`Claims` registry, each beside
the function that checks it (:meth:`Claims.claim`, a decorator): a stable id (the DVC metric
key, the same for every params profile), the paper's statement, value and the scale it ran at,
where it is stated, the figure that shows it and the stages its numbers come from, and its kind.
The check turns the pipeline's outputs into the claim's row (:meth:`Claim.row`,
:meth:`Claim.not_computed`): our value and its uncertainty, the tolerance with its
justification, the scale we ran at, and the verdict. A paper's claims stage computes
them from its stage outputs and calls :func:`export`, which checks that every registered claim
has exactly one row and writes ``reports/claims/<paper>.json`` atomically; the paper's report
shows them (:func:`read`), the site stage on ``reports/index.html`` (tms.reporting.site), with
DVC metrics made of them (tms.reporting.metrics).

Verdicts (:data:`VERDICTS`):

- **reproduced** / **not reproduced**: the paper's statement passed or failed our test, at a
  scale that can decide it.
- **inconclusive at this scale**: the test ran at a scale (sizes, steps, settings) that cannot
  decide the paper's statement, or on models that did not converge; the row says why.
- **erratum**: the statement does not hold as printed, and our evidence shows it; **caveat**: it
  holds with a qualification the paper leaves out. If the evidence fails, the verdict is
  reproduced (the printed statement stands).
- **finding**: ours, beyond the paper, with its evidence; **not found** when the evidence fails
  at the scale run (a finding has no paper scale to fall short of; the row's ``ours`` says why).
- **sanity check**: a theorem or a construction checked numerically: a check of our code, shown
  apart and never counted as reproduced; not reproduced when it fails.
- **not computed**: every model it needs diverged, or too few points are left.

Each row also has a **basis** (:data:`BASES`), counted apart everywhere: *empirical* (about
trained models: its numbers come from a stage of the registry's ``empirical`` stages) or
*mathematics* (a check of the papers' mathematics: theory, constructions, closed forms, ODE
integrations, and every sanity check). An inconclusive row has a **direction**: ``holds`` or
``fails``, what its test gave at the scale it ran (None for other verdicts).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tms.core.io import write_json
from tms.core.papers import Paper

REPRODUCED, NOT_REPRODUCED = "reproduced", "not reproduced"
INCONCLUSIVE = "inconclusive at this scale"
NOT_COMPUTED = "not computed"
NOT_FOUND = "not found"
SANITY = "sanity check"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, "erratum", "caveat", "finding", NOT_FOUND,
            SANITY, NOT_COMPUTED)
#: What a claim is: a statement to reproduce, a theorem or construction to check, an erratum,
#: a caveat or a finding of ours.
KINDS = ("reproduction", SANITY, "erratum", "caveat", "finding")
#: What a claim's evidence is: trained models (empirical) or the papers' mathematics.
EMPIRICAL, MATHEMATICS = "empirical", "mathematics"
BASES = (EMPIRICAL, MATHEMATICS)

_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")


def verdict(kind: str, ok: bool, inconclusive: str | None = None) -> str:
    """The verdict of a claim of ``kind`` (:data:`KINDS`) whose test gave ``ok``; with
    ``inconclusive`` (why the scale cannot decide it) a reproduction reads
    'inconclusive at this scale' whatever ``ok`` is. Raises ValueError on an unknown kind, or
    on ``inconclusive`` given for another kind (only a paper's statement has a paper scale to
    fall short of; a finding of ours that fails at the scale run is not found)."""
    if kind not in KINDS:
        raise ValueError(f"unknown claim kind {kind!r}; known: {KINDS}")
    if inconclusive and kind != "reproduction":
        raise ValueError(f"a claim of kind {kind!r} cannot be inconclusive ({inconclusive!r}); "
                         "only a reproduction can")
    if kind == "reproduction":
        return INCONCLUSIVE if inconclusive else (REPRODUCED if ok else NOT_REPRODUCED)
    if kind == SANITY:
        return SANITY if ok else NOT_REPRODUCED
    if kind in ("erratum", "caveat"):
        return kind if ok else REPRODUCED
    return "finding" if ok else NOT_FOUND


def _finite(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Claim:
    """One statement of a paper, as the paper makes it.

    id: stable key ('<part>.<name>', lower case), the same under every params profile;
    statement: the claim in words; source: where the paper states it (figure, section,
    equation); paper_value: the paper's value or form; paper_scale: the scale the paper ran at
    ('—' for pure mathematics); figure: the stem of the report figure that shows it (None: its
    row of the report's claims table); stages: the DVC stages its numbers come from; kind: one
    of :data:`KINDS`; basis: one of :data:`BASES`; central: one of the paper's central claims,
    which the site and the README show first. Raises ValueError on a malformed id, an
    unknown kind or basis, or a sanity check whose basis is not mathematics.
    """

    id: str
    statement: str
    source: str
    paper_value: str
    paper_scale: str
    figure: str | None
    stages: tuple[str, ...]
    kind: str = "reproduction"
    basis: str = EMPIRICAL
    central: bool = False

    def __post_init__(self):
        if not _ID.match(self.id):
            raise ValueError(f"claim id {self.id!r} is not '<part>.<name>' in [a-z0-9_]")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: unknown kind {self.kind!r}; known: {KINDS}")
        if self.basis not in BASES or (self.kind == SANITY and self.basis != MATHEMATICS):
            raise ValueError(f"claim {self.id}: basis {self.basis!r} is not one of {BASES} "
                             "(a sanity check's is mathematics)")

    def row(self, ok: bool, ours: str, tolerance: str, scale: str, *,
            value: float | None = None, uncertainty: float | None = None,
            inconclusive: str | None = None) -> dict:
        """The claims row of this claim: ``ours`` (our result in words), ``value`` and
        ``uncertainty`` (numbers, None where there is none; NaN becomes None), ``tolerance``
        (the test and its one-line justification), ``scale`` (what we ran: sizes, seeds,
        steps), the verdict (:func:`verdict` of ``ok`` and ``inconclusive``),
        ``inconclusive`` (a reproduction's only: why this scale cannot decide it; None unless the
        verdict is inconclusive) and ``direction`` (for an inconclusive verdict, 'holds' or
        'fails': what the test gave at this scale). Raises ValueError on ``inconclusive`` for a
        claim that is not a reproduction (:func:`verdict`)."""
        v = verdict(self.kind, bool(ok), inconclusive)
        return {**self._fields(), "ours": ours, "value": _finite(value),
                "uncertainty": _finite(uncertainty), "tolerance": tolerance, "scale": scale,
                "verdict": v,
                "inconclusive": inconclusive if v == INCONCLUSIVE else None,
                "direction": ("holds" if ok else "fails") if v == INCONCLUSIVE else None}

    def not_computed(self, why: str, scale: str = "—") -> dict:
        """The row of this claim when it could not be checked, saying ``why``."""
        return {**self._fields(), "ours": f"not computed: {why}", "value": None,
                "uncertainty": None, "tolerance": "—", "scale": scale, "verdict": NOT_COMPUTED,
                "inconclusive": None, "direction": None}

    def _fields(self) -> dict:
        return {"id": self.id, "claim": self.statement, "source": self.source,
                "paper": self.paper_value, "paper_scale": self.paper_scale, "kind": self.kind,
                "basis": self.basis, "central": self.central, "figure": self.figure,
                "stages": list(self.stages)}


@dataclass(frozen=True)
class Result:
    """What the check of a record claim returns (:meth:`Claims.record`): numbers, never prose.

    ok: what the test gave; value and uncertainty: the claim's number and its uncertainty (None
    where there is none); numbers: what the claim's wording templates read, {name: value};
    scale: what we ran (sizes, seeds, steps); inconclusive: why this scale cannot decide it (a
    reproduction's only); not_computed: why it could not be checked (the rest is then unused).
    """

    ok: bool = False
    value: float | None = None
    uncertainty: float | None = None
    numbers: Mapping[str, Any] = field(default_factory=dict)
    scale: str = "—"
    inconclusive: str | None = None
    not_computed: str | None = None


@dataclass(frozen=True)
class Record:
    """A claim declared by keywords (:meth:`Claims.record`): the fields of :class:`Claim`
    (``paper``: the paper's value or words; ``basis`` None for the registry's rule) and the two
    templates its row is rendered from, ``ours`` (what we found) and ``tolerance`` (the test and
    its justification), filled by str.format from its check's :attr:`Result.numbers`."""

    id: str
    statement: str
    source: str
    paper: str
    paper_scale: str
    stages: tuple[str, ...]
    ours: str
    tolerance: str
    figure: str | None = None
    kind: str = "reproduction"
    basis: str | None = None


#: A claim's check: ``check(claim, outputs)`` → its row (:meth:`Claim.row`, or
#: :meth:`Claim.not_computed` when the outputs cannot decide it).
Check = Callable[[Claim, Any], dict]


class Claims(Mapping):
    """A paper's claims in the order its report and the site show them, each declared once,
    beside the function that checks it (:meth:`claim`); a mapping id → :class:`Claim`.
    ``empirical``: the paper's stages that train models; a claim is empirical when one of its
    stages is among them and it is not a sanity check, else mathematics (:data:`BASES`).
    ``central``: the ids of the paper's central claims (declared later; :meth:`rows` raises
    ValueError if one never is)."""

    def __init__(self, empirical: Sequence[str] = (), central: Sequence[str] = ()) -> None:
        self.empirical = frozenset(empirical)
        self.central = tuple(central)
        self._claims: dict[str, Claim] = {}
        self._checks: dict[str, Check] = {}
        self._results: dict[str, Callable[[Any], Result]] = {}

    def claim(self, id: str, statement: str, source: str, paper_value: str, paper_scale: str,
              figure: str | None, stages: Sequence[str], kind: str = "reproduction",
              basis: str | None = None) -> Callable[[Check], Check]:
        """Declare a claim (fields as :class:`Claim`) and register the decorated function as its
        check. basis: None for the rule above (empirical when it reads a training stage and is
        not a sanity check); MATHEMATICS for a statement of the paper's mathematics that trained
        models are the evidence of. Raises ValueError on an id declared twice, a malformed id,
        an unknown kind or basis."""
        if basis is None:
            basis = (EMPIRICAL if kind != SANITY and self.empirical.intersection(stages)
                     else MATHEMATICS)
        declared = Claim(id, statement, source, paper_value, paper_scale, figure, tuple(stages),
                         kind, basis, id in self.central)
        if id in self._claims:
            raise ValueError(f"claim id {id!r} declared twice")

        def register(check: Check) -> Check:
            self._claims[id], self._checks[id] = declared, check
            return check
        return register

    def record(self, spec: Record) -> Callable[[Callable[[Any], Result]],
                                               Callable[[Any], Result]]:
        """Declare the claim ``spec`` (a :class:`Record`: declared by keywords) and register the
        decorated function, ``check(outputs) -> Result``, as its test: it returns numbers
        (:class:`Result`), and its row is rendered here, the record's ``ours`` and ``tolerance``
        filled from the result's ``numbers``. :meth:`result` gives a test the numbers. Raises
        ValueError as :meth:`claim`; KeyError when a template names a number the result lacks."""
        def register(check: Callable[[Any], Result]) -> Callable[[Any], Result]:
            def row(claim: Claim, outputs: Any) -> dict:
                r = check(outputs)
                if r.not_computed is not None:
                    return claim.not_computed(r.not_computed, r.scale)
                return claim.row(r.ok, spec.ours.format(**r.numbers),
                                 spec.tolerance.format(**r.numbers), r.scale, value=r.value,
                                 uncertainty=r.uncertainty, inconclusive=r.inconclusive)
            self.claim(spec.id, spec.statement, spec.source, spec.paper, spec.paper_scale,
                       spec.figure, spec.stages, spec.kind, spec.basis)(row)
            self._results[spec.id] = check
            return check
        return register

    def result(self, id: str, outputs: Any) -> Result:
        """The :class:`Result` of the record claim ``id`` (:meth:`record`) on ``outputs``: the
        numbers its tests assert. Raises KeyError for a claim not declared as a record."""
        return self._results[id](outputs)

    def include(self, part: "Claims") -> None:
        """Declare here, after those declared so far and in their order, the claims of ``part``
        (a share of this paper's claims kept in a module of its own), with their checks and
        its central ids. Raises ValueError on an id declared twice or a ``part`` whose
        training stages (``empirical``) differ from these, which would count its claims' bases
        otherwise."""
        if part.empirical != self.empirical:
            raise ValueError(f"the part's training stages {sorted(part.empirical)} are not "
                             f"{sorted(self.empirical)}")
        if twice := [id for id in part._claims if id in self._claims]:
            raise ValueError(f"claims declared twice: {twice}")
        self._claims.update(part._claims)
        self._checks.update(part._checks)
        self._results.update(part._results)
        self.central += part.central

    def __getitem__(self, id: str) -> Claim:
        return self._claims[id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._claims)

    def __len__(self) -> int:
        return len(self._claims)

    def row(self, id: str, outputs: Any) -> dict:
        """The row of claim ``id``, its check run on ``outputs``. Raises ValueError if the
        check returns the row of another claim."""
        row = self._checks[id](self._claims[id], outputs)
        if row["id"] != id:
            raise ValueError(f"the check of {id} returned the row of {row['id']}")
        return row

    def rows(self, outputs: Any) -> list[dict]:
        """Every claim's row in order (:meth:`row`): what a paper's claims stage exports.
        Raises ValueError if a central id names no declared claim."""
        if missing := [c for c in self.central if c not in self._claims]:
            raise ValueError(f"central claims {missing} are not declared")
        return [self.row(id, outputs) for id in self._claims]


def check(rows: Sequence[dict], claims: Mapping[str, Claim]) -> None:
    """Raise ValueError unless ``rows`` hold exactly one row per claim of ``claims``."""
    ids = [r["id"] for r in rows]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    missing = [i for i in claims if i not in ids]
    unknown = sorted(set(ids) - set(claims))
    if repeated or missing or unknown:
        raise ValueError(f"claims rows do not match the registry: repeated {repeated}, "
                         f"missing {missing}, unknown {unknown}")


def claims_path(paper: str, figures_dir: str | os.PathLike) -> Path:
    """``reports/claims/<paper>.json``, beside the figures directory's parent
    (``reports/figures/<paper>``, repository-relative as the stages and notebooks get it)."""
    return Path(figures_dir).parent.parent / "claims" / f"{paper}.json"


def export(rows: Sequence[dict], claims: Mapping[str, Claim], paper: Paper,
           figures_dir: str | os.PathLike) -> Path:
    """Write the claims file :func:`claims_path` atomically: written by the claims stage of
    ``paper`` (its registry line, tms.core.papers; the stage is ``<prefix>claims``) from its
    stage outputs, before its report; read by the report and the site.

    rows: one per claim of ``claims`` (:func:`check`), written in the registry's order, each
    with ``figure`` made the repository path of its PNG in ``figures_dir`` (the report draws
    it; the site links it where the report did) and ``stage`` added to its stages. The file
    holds ``paper``, ``title``, ``report`` (the HTML report's path), ``stage`` and ``claims``.
    Returns the path written. Raises ValueError if the rows do not match the registry.
    """
    check(rows, claims)
    figures_dir, stage = Path(figures_dir), f"{paper.prefix}claims"
    by_id = {r["id"]: r for r in rows}
    out = []
    for cid in claims:
        r = dict(by_id[cid])
        if r["figure"] is not None:
            r["figure"] = (figures_dir / f"{r['figure']}.png").as_posix()
        r["stages"] = list(dict.fromkeys([*r["stages"], stage]))
        out.append(r)
    path = claims_path(paper.key, figures_dir)
    write_json({"paper": paper.key, "title": paper.title, "stage": stage,
                "report": (path.parent.parent / f"{paper.key}.html").as_posix(), "claims": out},
               path)
    return path


def read(paper: str, figures_dir: str | os.PathLike) -> list[dict]:
    """The claims rows of ``paper`` as its claims stage wrote them (:func:`export`), for its
    report to show. Raises FileNotFoundError if the claims stage has not run."""
    return json.loads(claims_path(paper, figures_dir).read_text(encoding="utf-8"))["claims"]


def read_folder(folder: str | os.PathLike) -> list[dict]:
    """Every claims file of ``folder`` (``reports/claims`` or a snapshot's ``claims``, as
    :func:`export` writes them: ``paper``, ``title``, ``stage``, ``report``, ``claims``), in the
    order of their file names; [] where there is none. Raises ValueError for a file that is not
    JSON."""
    return [json.loads(f.read_text(encoding="utf-8"))
            for f in sorted(Path(folder).glob("*.json"))]


def max_z(estimate, exact, se) -> float:
    """The largest |estimate − exact| / se over equal-shaped arrays (or scalars): a Monte Carlo
    estimate against a closed form, in its standard errors. A zero se counts 0 where the
    estimate equals the closed form and ∞ where it does not; a NaN anywhere, or an infinite se,
    counts ∞ (so a check that cannot be read never passes)."""
    dev = np.abs(np.asarray(estimate, dtype=np.float64) - np.asarray(exact, dtype=np.float64))
    se = np.asarray(se, dtype=np.float64)
    ok = np.isfinite(se) & (se > 0)
    z = np.where(ok, dev / np.where(ok, se, 1.0), np.where((se == 0) & (dev == 0), 0.0, np.inf))
    return float(np.max(np.where(np.isnan(z), np.inf, z)))


def too_wide(low: float, high: float, target: float, tol: float, interval: str) -> str | None:
    """Why an estimate judged "within ``target`` ± ``tol``" is undecided: its interval
    [``low``, ``high``] is wider than the tolerance and reaches into the band ("``interval``
    (±half-width) is wider than the tolerance", ``interval`` naming it, e.g. 'the 95% interval');
    None where the interval decides (narrow enough, or wholly outside the band: a fail)."""
    half = (high - low) / 2
    return (f"{interval} (±{half:.2f}) is wider than the tolerance"
            if half > tol and low <= target + tol and high >= target - tol else None)


def span(values: Iterable) -> str:
    """Distinct values for a scale text: 'a' for one, 'a–b' for several (sorted)."""
    v = sorted(set(values))
    if not v:
        return "none"
    fmt = (lambda x: f"{x:g}") if not isinstance(v[0], str) else str
    return fmt(v[0]) if len(v) == 1 else f"{fmt(v[0])}–{fmt(v[-1])}"


def label(row: Mapping) -> str:
    """A row's verdict as a reader counts it: an inconclusive one with its direction,
    'inconclusive (holds at this scale)' or 'inconclusive (fails at this scale)'."""
    if row["verdict"] == INCONCLUSIVE and row.get("direction"):
        return f"inconclusive ({row['direction']} at this scale)"
    return row["verdict"]


def tally(rows: Iterable[Mapping], basis: str) -> list[tuple[str, int]]:
    """(:func:`label`, count) of the rows of ``basis`` (:data:`BASES`), most frequent first
    (ties in the order of :data:`VERDICTS`). Raises ValueError on an unknown basis."""
    if basis not in BASES:
        raise ValueError(f"unknown basis {basis!r}; known: {BASES}")
    order = {v: k for k, v in enumerate(VERDICTS)}
    counts: dict[str, int] = {}
    for r in rows:
        if r["basis"] == basis:
            counts[label(r)] = counts.get(label(r), 0) + 1
    return sorted(counts.items(), key=lambda kv: (
        -kv[1], order[INCONCLUSIVE if kv[0].startswith("inconclusive (") else kv[0]], kv[0]))
