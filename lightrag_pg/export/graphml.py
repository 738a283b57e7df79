"""GraphML export (for Gephi, yEd, Cytoscape), written with the standard library.

The document is streamed: the attribute keys are declared first (the columns
are known in advance), then a ``<node>`` per entity and an ``<edge>`` per
relation as their rows arrive, so the graph is never built in memory.
networkx could write GraphML too, but only from a whole in-memory graph and
as an extra dependency; escaping text for XML is all the writer needs.
Node ids are entity names; ``weight`` is a double, the rest strings (lists
joined with ``<SEP>``). Characters XML 1.0 cannot carry are dropped.
Relations are undirected, so the graph is declared undirected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .formats import TextWriter
from .sections import ENTITIES, RELATIONS, Section, as_text

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_DOUBLES = {"weight"}


def _text(value: Any) -> str:
    return escape(_NOT_XML.sub("", as_text(value)))


def _attr(value: str) -> str:
    return quoteattr(_NOT_XML.sub("", value))


def _keys(section: Section) -> tuple[str, ...]:
    """The data keys of a section's rows: a node's name is also its label; an edge's ends are not data."""
    return ("label", *section.columns[1:]) if section.name == ENTITIES.name else section.columns[2:]


def _data(target: str, keys: Sequence[str], values: Sequence[Any]) -> str:
    return "".join(
        f'<data key="{target}_{k}">{_text(v)}</data>'
        for k, v in zip(keys, values, strict=True)
        if v is not None
    )


class GraphmlWriter(TextWriter):
    """A GraphML file: entities as nodes, relations as edges."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        self.out.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
            'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
        )
        for section in sections:
            target = "node" if section.name == ENTITIES.name else "edge"
            for column in _keys(section):
                kind = "double" if column in _DOUBLES else "string"
                self.out.write(
                    f'  <key id="{target}_{column}" for="{target}" '
                    f'attr.name="{column}" attr.type="{kind}"/>\n'
                )
        self.out.write('  <graph id="G" edgedefault="undirected">\n')

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        keys = _keys(section)
        if section.name == ENTITIES.name:
            for row in rows:
                self.out.write(f"    <node id={_attr(row[0])}>{_data('node', keys, row)}</node>\n")
        elif section.name == RELATIONS.name:
            for row in rows:
                ends = f"source={_attr(row[0])} target={_attr(row[1])}"
                self.out.write(f"    <edge {ends}>{_data('edge', keys, row[2:])}</edge>\n")

    def finish(self) -> None:
        self.out.write("  </graph>\n</graphml>\n")
        super().finish()
