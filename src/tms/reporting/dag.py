"""The pipeline DAG: ``dvc dag --mermaid`` as text, as a graph, and drawn to SVG offline.

The SVG is drawn with networkx and matplotlib (no Mermaid script, no network), byte-stable
like every figure of the project.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx

from tms.core import savefig

_NODE = re.compile(r'^\s*(\w+)\["(.*)"\]\s*$')
_EDGE = re.compile(r"^\s*(\w+)-->(\w+)\s*$")


def mermaid(repo: str | Path = ".") -> str:
    """The output of ``dvc dag --mermaid`` run in ``repo`` (a Mermaid flowchart).

    Raises subprocess.CalledProcessError if DVC fails (e.g. an invalid dvc.yaml).
    """
    run = subprocess.run([sys.executable, "-m", "dvc", "dag", "--mermaid"], cwd=repo,
                         capture_output=True, text=True, check=True)
    return run.stdout.strip()


def parse(text: str) -> nx.DiGraph:
    """The graph of a Mermaid flowchart as ``dvc dag --mermaid`` writes it: nodes are stage
    names, an edge a → b means b depends on an output of a.

    Raises ValueError on a line that is neither the header, a node nor an edge.
    """
    lines = text.strip().splitlines()
    if not lines or not lines[0].startswith("flowchart"):
        raise ValueError("not a Mermaid flowchart")
    names, graph = {}, nx.DiGraph()
    for line in lines[1:]:
        if m := _NODE.match(line):
            names[m.group(1)] = m.group(2)
            graph.add_node(m.group(2))
        elif m := _EDGE.match(line):
            graph.add_edge(names[m.group(1)], names[m.group(2)])
        elif line.strip():
            raise ValueError(f"unexpected line in the Mermaid flowchart: {line!r}")
    return graph


def svg(graph: nx.DiGraph) -> str:
    """The graph drawn left to right in layers (topological generations; within a layer by
    name), as SVG text (no XML header), without timestamps or software metadata.
    Raises nx.NetworkXUnfeasible on a cycle."""
    plt = savefig.plt                      # Agg backend, fixed SVG hash salt
    layers = [sorted(layer) for layer in nx.topological_generations(graph)]
    pos = {node: (float(depth), (len(layer) - 1) / 2 - i)        # first name on top
           for depth, layer in enumerate(layers) for i, node in enumerate(layer)}
    height = max((len(layer) for layer in layers), default=1)
    fig, ax = plt.subplots(figsize=(2.6 * max(len(layers), 1) + 1, 0.38 * height + 0.8))
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, arrowstyle="-|>", arrowsize=10,
                           edge_color="#999999", node_size=2500)
    for node, (x, y) in sorted(pos.items()):
        ax.text(x, y, node, ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.3", "fc": "#eef3fb", "ec": "#4a6fa5"})
    ax.set_axis_off()
    ax.margins(0.12, 0.04)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
