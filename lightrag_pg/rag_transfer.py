"""The facade's moves from and to upstream LightRAG: import a workspace, export one."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .handle import Facade

if TYPE_CHECKING:  # loaded on first use: a query imports none of it
    from .index.lightrag_compat.exporter import ExportReport
    from .index.lightrag_compat.report import ImportCallback, ImportReport


class TransferMethods(Facade):
    """The import and export half of :class:`~lightrag_pg.rag.LightRAG`'s API."""

    async def aimport_lightrag(
        self,
        source: str | os.PathLike[str],
        source_workspace: str | None = None,
        *,
        embedding_model: str | None = None,
        graph: str = "auto",
        batch_size: int = 500,
        progress: ImportCallback | None = None,
    ) -> ImportReport:
        """Import an upstream LightRAG 1.5.7 workspace into this one, with no LLM or embedding call.

        ``source``: a working directory (``source_workspace``: its subfolder, if any) or a
        ``postgresql://`` DSN of upstream's PostgreSQL storages (``source_workspace``: the
        value of their ``workspace`` column, default ``default``; ``graph``: ``auto``,
        ``age`` or ``pgtable``). Documents, statuses, chunks, the three vector sets as
        stored, the LLM cache, entities and relations come over, with the fragment tables
        rebuilt from upstream's cached extractions. ``embedding_model``: the model upstream
        embedded with, needed for a working directory (its files do not record it); a model
        or dimension other than this workspace's is refused
        (:class:`~lightrag_pg.errors.EmbeddingMismatch`). Streams in batches of
        ``batch_size``, one transaction each; run again after an interruption, it finishes
        the job, and it changes nothing once done. Documents the workspace already holds
        are skipped. Returns the report (counts per kind, skipped and why, time).
        Details: :mod:`lightrag_pg.index.lightrag_compat.importer`.
        """
        from .index.lightrag_compat.importer import import_lightrag
        from .index.lightrag_compat.report import ignore_import_progress

        return await import_lightrag(
            self._run.transfer_target(),
            source,
            source_workspace,
            embedding_model=embedding_model,
            graph=graph,
            batch_size=batch_size,
            progress=progress or ignore_import_progress,
        )

    async def aexport_lightrag(
        self, working_dir: str | os.PathLike[str], *, overwrite: bool = False
    ) -> ExportReport:
        """Write this workspace as an upstream LightRAG 1.5.7 working directory (its JSON,
        nano-vectordb and GraphML files), which upstream opens and queries with the same
        embedding model. ``working_dir`` must be empty or missing unless ``overwrite``.
        Details: :mod:`lightrag_pg.index.lightrag_compat.exporter`."""
        from .index.lightrag_compat.exporter import export_lightrag

        return await export_lightrag(self._run.transfer_target(), working_dir, overwrite=overwrite)
