"""Moving in from upstream LightRAG and back: import a workspace without re-indexing, export one."""
