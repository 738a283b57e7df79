"""``lightrag-pg mcp``: the MCP tools over stdio, for desktop clients and coding agents."""

from __future__ import annotations

import argparse

from ..errors import ConfigurationError


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        parents=parents,
        help="serve the MCP tools over stdio (needs the [mcp] extra)",
        description="Serve the Model Context Protocol tools (query, retrieve, insert_text, "
        "document_status, list_documents, delete_document, search_entities, entity, subgraph, "
        "list_workspaces) on stdin and stdout, for a client that starts this command itself. "
        "Database, workspace and models as for the other commands; logs go to stderr.",
    )
    p.add_argument(
        "--read-only",
        action="store_true",
        default=None,
        help="offer only the tools that change nothing (default: $LIGHTRAG_MCP_READ_ONLY)",
    )
    p.add_argument(
        "--allow-create",
        action="store_true",
        default=None,
        help="let a tool's workspace argument create a workspace that does not exist",
    )
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> int:
    try:
        from ..server.mcp_stdio import serve_stdio
        from ..server.settings import ServerSettings
    except ImportError as exc:
        raise ConfigurationError(
            f"the MCP server needs the [mcp] extra: pip install 'lightrag-pg[mcp]' ({exc.name} is missing)"
        ) from None
    settings = ServerSettings.from_env(
        dsn=args.dsn,
        default_workspace=args.workspace,
        allow_create=args.allow_create,
        mcp_read_only=args.read_only,
    )
    await serve_stdio(settings)
    return 0
