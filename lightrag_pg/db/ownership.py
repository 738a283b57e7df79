"""Which schemas and AGE graphs are lightrag_pg's, so nothing else is ever written or dropped.

A workspace is a schema lightrag_pg created and marked with the comment
``lightrag_pg workspace``; its graph ``<workspace>_kg`` carries
``lightrag_pg workspace graph``. Workspaces created before the marker existed
are recognised by their shape: a schema holding both ``workspace_info`` and
``alembic_version``, whose graph is the one its ``entities_mirror_to_graph``
trigger writes to. They are marked the next time they are migrated (opening
them with ``LightRAG`` or ``lightrag-pg migrate --all``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import WorkspaceConflict
from .identifiers import WorkspaceName, graph_name
from .sqlfile import load_queries

SQL = load_queries(__package__, "ownership.sql")
OWNERSHIP = SQL["ownership"]


@dataclass(frozen=True, slots=True)
class Ownership:
    """Catalog facts about a workspace name's schema and graph (row of ``ownership``)."""

    workspace: WorkspaceName
    schema_exists: bool
    schema_marked: bool
    legacy_shape: bool
    schema_is_graph: bool
    graph_exists: bool
    graph_marked: bool
    mirrored: bool

    @classmethod
    def from_row(cls, workspace: WorkspaceName, row: Any) -> Ownership:
        return cls(workspace, *(bool(v) for v in row))

    @property
    def graph(self) -> str:
        return graph_name(self.workspace)

    @property
    def owned(self) -> bool:
        """The schema exists and is a lightrag_pg workspace (marked, or created before markers)."""
        return self.schema_exists and not self.schema_is_graph and (self.schema_marked or self.legacy_shape)

    @property
    def owns_graph(self) -> bool:
        """The graph ``<workspace>_kg`` exists and belongs to this workspace."""
        return self.graph_exists and (self.graph_marked or (self.owned and self.mirrored))

    def check_can_create(self) -> None:
        """Raise :class:`WorkspaceConflict` unless the workspace may be created or upgraded here."""
        if self.schema_is_graph:
            raise WorkspaceConflict(
                f"cannot use workspace {self.workspace!r}: schema {self.workspace!r} belongs to the "
                f"AGE graph {self.workspace!r}; choose another workspace name"
            )
        if self.schema_exists and not self.owned:
            raise WorkspaceConflict(
                f"cannot use workspace {self.workspace!r}: schema {self.workspace!r} already exists "
                "and was not created by lightrag_pg; choose another workspace name "
                "(lightrag_pg never writes into a schema it did not create)"
            )
        if self.graph_exists and not self.owns_graph:
            raise WorkspaceConflict(
                f"cannot use workspace {self.workspace!r}: the AGE graph (or schema) {self.graph!r} "
                "already exists and was not created by lightrag_pg for this workspace; "
                "choose another workspace name, or drop or rename that graph yourself"
            )

    def check_can_drop(self) -> None:
        """Raise :class:`WorkspaceConflict` if the schema exists but is not a lightrag_pg workspace."""
        if self.schema_exists and not self.owned:
            raise WorkspaceConflict(
                f"refusing to drop schema {self.workspace!r}: it was not created by lightrag_pg"
            )


def ownership_params(workspace: WorkspaceName) -> tuple[str, str]:
    """The parameters of the ``ownership`` query for ``workspace``."""
    return workspace, graph_name(workspace)
