"""A readable answer made of the retrieved knowledge, for when no LLM is configured.

The answer is what a reader would look for first: in each source file, the
whole sentences closest to the question (by the workspace's embedding model,
one call for all of them), then the graph's facts about the entities and
relations found, each the first whole sentence of its description. Nothing
is cut inside a sentence.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np

from ..sentences import sentence_ends
from ..types import GRAPH_FIELD_SEP
from .context import QueryContext
from .passages import Passage, passage, whole_sentences

NO_LLM_LINE = "No LLM is configured: here are the sentences of the sources closest to the question."
BYPASS_WITHOUT_LLM = (
    "No LLM is configured: bypass mode sends the question straight to the LLM, so there is no answer.\n"
)
EMPTY_WORKSPACE = (
    "This workspace has no documents yet, so there is nothing to answer from: insert some first "
    "(`lightrag-pg insert FILE`, or Documents → Upload in the web UI), then ask again.\n"
)
SOURCES = 5
"""Chunks whose sentences are read (the best-ranked ones)."""
SENTENCES = 400
"""The most sentences sent to the embedding model for one answer."""
FACTS = 5
"""Entities, and relations, whose facts are listed."""

Embed = Callable[[list[str]], Awaitable[np.ndarray]]


def first_sentence(description: str) -> str:
    """The first whole sentence of a (possibly joined) description, on one line."""
    text = " ".join(description.split(GRAPH_FIELD_SEP, 1)[0].split())
    ends = sentence_ends(text)
    return text[: ends[0][0]] if ends else text


def _facts(ctx: QueryContext) -> list[str]:
    lines = [
        f"- **{e.name}** ({e.entity_type}): {first_sentence(e.description)}"
        for e in ctx.entities[:FACTS]
        if e.description.strip()
    ]
    lines += [
        f"- **{r.src}** – **{r.tgt}**"
        + (f" ({r.keywords})" if r.keywords.strip() else "")
        + f": {first_sentence(r.description)}"
        for r in ctx.relations[:FACTS]
        if r.description.strip()
    ]
    return lines


def _quoted(p: Passage) -> str:
    pieces = [f"**{s}**" if i in p.marked else s for i, s in enumerate(p.sentences)]
    text = " ".join(pieces)
    return "> " + ("… " if p.cut_before else "") + text + (" …" if p.cut_after else "")


async def offline_answer(question: str, ctx: QueryContext, embed: Embed) -> str:
    """The answer without an LLM: per source file (in the order of its best chunk), the
    passages of whole sentences closest to ``question``, the matches in bold, with the
    file's reference id; then the graph facts."""
    sources = list(zip(ctx.chunks, ctx.chunk_reference_ids, strict=True))[:SOURCES]
    per_chunk = [whole_sentences(c.content, c.chunk_order_index == 0) for c, _ in sources]
    budget = SENTENCES
    for i, sentences in enumerate(per_chunk):
        per_chunk[i] = sentences[: max(budget, 0)]
        budget -= len(per_chunk[i])
    texts = [question] + [s.text for sentences in per_chunk for s in sentences]
    passages: list[Passage | None] = [None] * len(sources)
    if len(texts) > 1:
        vectors = np.asarray(await embed(texts), dtype=np.float32)
        vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        scores = (vectors[1:] @ vectors[0]).tolist()
        offset = 0
        for i, sentences in enumerate(per_chunk):
            passages[i] = passage(sentences, scores[offset : offset + len(sentences)])
            offset += len(sentences)
    by_file: dict[str, tuple[str, list[Passage]]] = {}
    for (chunk, ref_id), found in zip(sources, passages, strict=True):
        entry = by_file.setdefault(chunk.file_path, (ref_id, []))
        if found is not None and found.sentences not in [p.sentences for p in entry[1]]:
            entry[1].append(found)
    lines = [NO_LLM_LINE, ""]
    for file_path, (ref_id, found_here) in by_file.items():
        if not found_here:
            continue
        lines.append(f"**{file_path}**" + (f" [{ref_id}]" if ref_id else ""))
        lines += [_quoted(p) for p in found_here]
        lines.append("")
    facts = _facts(ctx)
    if facts:
        lines += ["Graph facts:", *facts]
    return "\n".join(lines).rstrip() + "\n"
