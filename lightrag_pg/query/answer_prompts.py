"""Prompts of the query pipeline, written for lightrag_pg after LightRAG's shape.

Markers a test double (or a log reader) can rely on:

* ``---Keyword Extraction---`` is the first line of the keyword-extraction
  prompt (:data:`KEYWORDS_MARKER`). The user's query is everything after the
  **last** line that reads exactly ``Query:`` up to the end of the prompt (see
  ``lightrag_pg.testing.query_from_keywords_prompt``). The model must answer with one JSON
  object holding ``high_level_keywords`` and ``low_level_keywords`` lists.
* ``---Answer From Knowledge Graph And Documents---`` starts the RAG answer
  system prompt (:data:`RAG_RESPONSE`, placeholders ``{response_type}``,
  ``{user_prompt}``, ``{context_data}``); ``---Answer From Documents---``
  starts the naive-mode one (:data:`NAIVE_RAG_RESPONSE`, placeholders
  ``{response_type}``, ``{user_prompt}``, ``{content_data}``). Both end with a
  ``---Context---`` section holding the rendered context.
* The context (:data:`KG_QUERY_CONTEXT`, :data:`NAIVE_QUERY_CONTEXT`) has
  the sections ``Knowledge Graph Data (Entity):``, ``Knowledge Graph Data
  (Relationship):``, ``Document Chunks (Each entry has a reference_id refer to
  the `Reference Document List`):`` and ``Reference Document List ...:``;
  each of the first three holds one JSON object per line inside a ```json
  fence, the reference list holds lines ``[n] file_path``.
* ``---User Query---`` separates the system prompt from the query when the
  whole prompt is shown (``only_need_prompt``), as upstream does.
"""

from __future__ import annotations

KEYWORDS_MARKER = "---Keyword Extraction---"
RAG_MARKER = "---Answer From Knowledge Graph And Documents---"
NAIVE_MARKER = "---Answer From Documents---"
USER_QUERY_MARKER = "---User Query---"

FAIL_RESPONSE = "Sorry, I'm not able to provide an answer to that question.[no-context]"
DEFAULT_RESPONSE_TYPE = "Multiple Paragraphs"

KEYWORDS_EXTRACTION = (
    KEYWORDS_MARKER
    + """
You turn a user's question into search keywords for a retrieval system built
on a knowledge graph. You do not answer the question.

Produce two lists:
1. "high_level_keywords": the broad themes, concepts or kinds of question the
   query is about. They are matched against descriptions of relationships.
2. "low_level_keywords": the concrete things named in the query: people,
   organisations, places, products, technical terms, dates. They are matched
   against entity names and descriptions.

Rules:
- Answer with a single JSON object and nothing else: no prose, no code fence.
- Take every keyword from the query itself; do not invent topics.
- Prefer short phrases; keep a multi-word name together ("Large Language Model").
- Write keywords in {language}, keeping proper nouns in their original form.
- If the query is too vague or is small talk, return two empty lists.

Example query: "How did the 2008 financial crisis change banking regulation in the EU?"
{{"high_level_keywords": ["Financial crisis impact", "Banking regulation", "Regulatory reform"], "low_level_keywords": ["2008 financial crisis", "European Union", "banks", "capital requirements"]}}

Example query: "Who founded the Rust programming language and why?"
{{"high_level_keywords": ["Programming language origins", "Motivation"], "low_level_keywords": ["Rust", "founder", "Mozilla"]}}

Example query: "hello"
{{"high_level_keywords": [], "low_level_keywords": []}}

Query:
{query}"""
)

RAG_RESPONSE = (
    RAG_MARKER
    + """
You are an assistant answering a question from the Context below, which holds
a knowledge graph (entities and relationships) and document chunks.

Instructions:
1. Work out what the user is asking, using the conversation history if any.
2. Answer from the Context only. Use the knowledge graph to connect facts and
   the document chunks for detail. Do not add outside knowledge; if the
   Context does not contain the answer, say so plainly instead of guessing.
3. Write in the language of the question, in Markdown, as {response_type}.
4. Cite the document chunks you relied on with their reference numbers in
   square brackets, e.g. [1] or [2][3], taken from the `Reference Document
   List`. Never cite a number that is not in that list.
5. End with a section headed `### References` listing at most 5 cited
   documents, one per line, as `- [n] file path`, and write nothing after it.

Additional instructions: {user_prompt}

---Context---
{context_data}
"""
)

NAIVE_RAG_RESPONSE = (
    NAIVE_MARKER
    + """
You are an assistant answering a question from the document chunks in the
Context below.

Instructions:
1. Work out what the user is asking, using the conversation history if any.
2. Answer from the Context only; do not add outside knowledge. If the Context
   does not contain the answer, say so plainly instead of guessing.
3. Write in the language of the question, in Markdown, as {response_type}.
4. Cite the chunks you relied on with their reference numbers in square
   brackets, e.g. [1] or [2][3], taken from the `Reference Document List`.
   Never cite a number that is not in that list.
5. End with a section headed `### References` listing at most 5 cited
   documents, one per line, as `- [n] file path`, and write nothing after it.

Additional instructions: {user_prompt}

---Context---
{content_data}
"""
)

_CHUNKS_AND_REFERENCES = """Document Chunks (Each entry has a reference_id refer to the `Reference Document List`):

```json
{text_chunks_str}
```

Reference Document List (Each entry starts with a [reference_id] that corresponds to entries in the Document Chunks):

```
{reference_list_str}
```
"""

KG_QUERY_CONTEXT = (
    """Knowledge Graph Data (Entity):

```json
{entities_str}
```

Knowledge Graph Data (Relationship):

```json
{relations_str}
```

"""
    + _CHUNKS_AND_REFERENCES
)

NAIVE_QUERY_CONTEXT = _CHUNKS_AND_REFERENCES


def keywords_prompt(query: str, language: str = "English") -> str:
    """Render the keyword-extraction prompt for ``query``."""
    return KEYWORDS_EXTRACTION.format(query=query, language=language)


def format_user_prompt(user_prompt: str | None) -> str:
    """The value upstream substitutes for ``{user_prompt}`` in answer prompts."""
    return f"\n\n{user_prompt}" if user_prompt else "n/a"


def render_system_prompt(
    template: str, *, context: str, response_type: str | None, user_prompt: str | None
) -> str:
    """Fill an answer prompt template (KG or naive placeholders both work)."""
    return template.format(
        response_type=response_type or DEFAULT_RESPONSE_TYPE,
        user_prompt=format_user_prompt(user_prompt),
        context_data=context,
        content_data=context,
    )


def full_prompt(system_prompt: str, query: str) -> str:
    """The prompt shown for ``only_need_prompt``, joined like upstream."""
    return "\n\n".join([system_prompt, USER_QUERY_MARKER, query])
