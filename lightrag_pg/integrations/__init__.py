"""Retrievers for agent frameworks: :mod:`.langchain` (``[langchain]`` extra) and
:mod:`.llamaindex` (``[llamaindex]`` extra), on a ``LightRAG`` or a running server."""
