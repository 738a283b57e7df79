-- Extensions lightrag_pg uses; workspaces are created by the library (Alembic).
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS age;
