"""Prompts for entity/relation extraction, gleaning and description summaries.

The record format is upstream LightRAG's: one record per line,
``entity<|#|>NAME<|#|>TYPE<|#|>DESCRIPTION`` and
``relation<|#|>SOURCE<|#|>TARGET<|#|>KEYWORDS<|#|>DESCRIPTION``, followed by a
line ``<|COMPLETE|>``. The wording and the few-shot examples are this
project's own.

How a fake (test) LLM recognises each prompt. Route on the last user message.
The first line of each prompt is a fixed header, which is the unambiguous test
(chunk text may quote any marker, but never comes first); each prompt also
contains a marker that occurs in no other kind of prompt of this module (a
gleaning prompt holds the extraction's too: it repeats the extraction prompt):

* **Extraction** (user prompt of :func:`extraction_messages`): first line
  ``"---Task: Extract Entities and Relations---"``; contains
  ``"---Input Text---"``. The chunk text is exactly what lies between the first
  ``"---Input Text---\\n"`` and the last ``"\\n---End of Input Text---"``
  (``lightrag_pg.testing.prompt_input_text``). The system prompt (first line ``"---Role---"``)
  holds the instructions and examples and none of the headers or markers.
* **Gleaning** (user prompt of :func:`gleaning_messages`, with the same system
  prompt): the extraction user prompt of the same chunk up to and including its
  ``"---End of Input Text---"`` line, then a line
  ``"---Task: Add MISSED Entities and Relations---"`` and the records found so
  far (names only) and the malformed ones; contains ``"MISSED"`` (upper case,
  which no other prompt contains). Its first line is the extraction header: it
  is told from an extraction prompt by the gleaning header line after the last
  ``"\\n---End of Input Text---"`` (nothing of the chunk text comes after it).
  Everything before that is the extraction prompt's, so a provider's prefix
  cache holds it from the extraction call just made.
* **Summary** (:func:`summary_prompt`, a single user message, no system
  prompt): first line ``"---Task: Summarize Descriptions---"``; contains
  ``"---Descriptions---"``. The instructions, the same for entities and
  relations, come first; then lines ``"Kind: entity"`` / ``"Kind: relation"`` and
  ``"Name: ..."`` name the subject; each line between ``"---Descriptions---"``
  and ``"---End of Descriptions---"`` is one description encoded as a JSON
  string literal, so multi-line descriptions stay on one line
  (``lightrag_pg.testing.prompt_descriptions``).

``lightrag_pg.testing.classify_prompt`` applies these rules.

Layout: what every call of a kind shares comes first and what varies last, so
that a provider's prefix cache can reuse the long fixed part. An extraction's
system prompt (instructions and examples) and the head of its user prompt depend
only on the entity types and the language; the chunk comes last. A gleaning
call repeats the extraction call up to the end of the chunk. A summary's
instructions depend only on the language and the summary length.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Literal

from ..errors import ConfigurationError, InvalidInput

__all__ = [
    "COMPLETION_DELIMITER",
    "DESCRIPTIONS_END",
    "EXTRACTION_HEADER",
    "EXTRACTION_MARKER",
    "GLEANING_HEADER",
    "GLEANING_MARKER",
    "INPUT_TEXT_END",
    "SUMMARY_HEADER",
    "SUMMARY_MARKER",
    "TUPLE_DELIMITER",
    "extraction_messages",
    "gleaning_messages",
    "summary_prompt",
]

TUPLE_DELIMITER = "<|#|>"
COMPLETION_DELIMITER = "<|COMPLETE|>"

EXTRACTION_HEADER = "---Task: Extract Entities and Relations---"
GLEANING_HEADER = "---Task: Add MISSED Entities and Relations---"
SUMMARY_HEADER = "---Task: Summarize Descriptions---"

EXTRACTION_MARKER = "---Input Text---"
INPUT_TEXT_END = "---End of Input Text---"
GLEANING_MARKER = "MISSED"
SUMMARY_MARKER = "---Descriptions---"
DESCRIPTIONS_END = "---End of Descriptions---"

_D = TUPLE_DELIMITER
_C = COMPLETION_DELIMITER

# Few-shot examples: (text, output records without the completion line).
_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        """The Halvorsen Lab at Nordfjord University studies coral bleaching. In March 2023 postdoctoral researcher Dr. Amara Osei published a dataset of 4,000 reef temperature readings collected by the lab's autonomous buoy, SeaSense-2. Lab director Prof. Ingrid Halvorsen said the readings will train the lab's new bleaching forecast model.""",
        """entity<|#|>Halvorsen Lab<|#|>Organization<|#|>The Halvorsen Lab is a research group at Nordfjord University that studies coral bleaching.
entity<|#|>Nordfjord University<|#|>Organization<|#|>Nordfjord University is the university that hosts the Halvorsen Lab.
entity<|#|>Coral Bleaching<|#|>Concept<|#|>Coral bleaching is the phenomenon studied by the Halvorsen Lab.
entity<|#|>Amara Osei<|#|>Person<|#|>Dr. Amara Osei is a postdoctoral researcher who published a reef temperature dataset in March 2023.
entity<|#|>Reef Temperature Dataset<|#|>Data<|#|>The reef temperature dataset holds 4,000 readings collected by the SeaSense-2 buoy.
entity<|#|>SeaSense-2<|#|>Artifact<|#|>SeaSense-2 is the autonomous buoy of the Halvorsen Lab that collects reef temperature readings.
entity<|#|>Ingrid Halvorsen<|#|>Person<|#|>Prof. Ingrid Halvorsen is the director of the Halvorsen Lab.
entity<|#|>Bleaching Forecast Model<|#|>Method<|#|>The bleaching forecast model is a new model of the Halvorsen Lab trained on reef temperature readings.
relation<|#|>Halvorsen Lab<|#|>Nordfjord University<|#|>affiliation, hosting<|#|>The Halvorsen Lab is part of Nordfjord University.
relation<|#|>Halvorsen Lab<|#|>Coral Bleaching<|#|>research focus<|#|>The Halvorsen Lab studies coral bleaching.
relation<|#|>Amara Osei<|#|>Reef Temperature Dataset<|#|>publication, data release<|#|>Amara Osei published the reef temperature dataset in March 2023.
relation<|#|>SeaSense-2<|#|>Reef Temperature Dataset<|#|>measurement, data collection<|#|>The readings in the reef temperature dataset were collected by SeaSense-2.
relation<|#|>Ingrid Halvorsen<|#|>Halvorsen Lab<|#|>leadership<|#|>Ingrid Halvorsen directs the Halvorsen Lab.
relation<|#|>Reef Temperature Dataset<|#|>Bleaching Forecast Model<|#|>training data, forecasting<|#|>The reef temperature readings will be used to train the bleaching forecast model.""",
    ),
    (
        """Line 4 of the Brasca Metro opened on 12 June 2021 and links Central Station with Brasca Airport. The city's transit authority, Brasca Mobility, reports that the line carries 90,000 riders a day and has cut the trip to the airport from 50 to 22 minutes.""",
        """entity<|#|>Line 4<|#|>Artifact<|#|>Line 4 is a Brasca Metro line, opened on 12 June 2021, that carries 90,000 riders a day.
entity<|#|>Brasca Metro<|#|>Organization<|#|>The Brasca Metro is the metro network of the city of Brasca.
entity<|#|>Central Station<|#|>Location<|#|>Central Station is a Brasca Metro station served by Line 4.
entity<|#|>Brasca Airport<|#|>Location<|#|>Brasca Airport is reached from Central Station by Line 4 in 22 minutes.
entity<|#|>Brasca Mobility<|#|>Organization<|#|>Brasca Mobility is the transit authority of the city of Brasca.
entity<|#|>Line 4 Opening<|#|>Event<|#|>The opening of Line 4 took place on 12 June 2021.
relation<|#|>Line 4<|#|>Brasca Metro<|#|>network membership<|#|>Line 4 is one of the lines of the Brasca Metro.
relation<|#|>Line 4<|#|>Central Station<|#|>route, connection<|#|>Line 4 serves Central Station.
relation<|#|>Line 4<|#|>Brasca Airport<|#|>route, travel time<|#|>Line 4 links Brasca Airport with the city and cut the trip from 50 to 22 minutes.
relation<|#|>Brasca Mobility<|#|>Line 4<|#|>operation, ridership reporting<|#|>Brasca Mobility reports the ridership of Line 4.
relation<|#|>Line 4 Opening<|#|>Line 4<|#|>inauguration<|#|>Line 4 entered service at the Line 4 Opening on 12 June 2021.""",
    ),
    (
        """Marie Curie was born in Warsaw.""",
        """entity<|#|>Marie Curie<|#|>Person<|#|>Marie Curie is a person who was born in Warsaw.
entity<|#|>Warsaw<|#|>Location<|#|>Warsaw is the city where Marie Curie was born.
relation<|#|>Marie Curie<|#|>Warsaw<|#|>birthplace, origin<|#|>Marie Curie was born in Warsaw.""",
    ),
)

_ENTITY_FORMAT = f"entity{_D}name{_D}type{_D}description"
_RELATION_FORMAT = f"relation{_D}source{_D}target{_D}keywords{_D}description"

_SYSTEM_TEMPLATE = f"""---Role---
You build knowledge graphs. You read a passage of text and write down the entities it names and the relations between them, one record per line in a fixed format.

---Instructions---
1. Entities. Find every clearly identifiable, meaningful entity in the text. For each one give:
   - name: the entity's name as the text writes it. Use Title Case for names that are not case-sensitive, and spell an entity the same way every time it appears.
   - type: exactly one of these types: {{entity_types}}. If none of them fits, write Other; never invent a new type.
   - description: one or two sentences, in the third person, on what the text says about the entity. Use only the text.
   Write each entity on its own line as:
   {_ENTITY_FORMAT}
2. Relations. Find the direct, explicitly stated relations between the entities you listed. Break a statement that links more than two entities into pairs. For each pair give:
   - source and target: the two names, spelled exactly as in the entity lines.
   - keywords: a few high-level words or short phrases naming the kind of relation, separated by commas.
   - description: one sentence explaining how the two entities are related.
   Write each relation on its own line as:
   {_RELATION_FORMAT}
3. The field separator {_D} is a single fixed token. Never write anything inside it, never use it between keywords, and never split one record over several lines.
4. Relations are undirected: list each pair once. Write all entity lines first, then all relation lines, most important relations first.
5. Name things explicitly; do not use pronouns such as "he", "they", "this paper" or "our team".
6. Write names, keywords and descriptions in {{language}}. Keep proper nouns in their original language when there is no standard translation.
7. Output only the records: no headings, numbering, explanations or code fences. After the last record write a line containing only {_C}.

---Examples---
{{examples}}"""

_USER_HEAD = f"""{EXTRACTION_HEADER}
Extract the entities and relations from the text between the markers below, following the system instructions exactly. Output only entity and relation lines, in {{language}}, then {_C} on a line of its own.

---Entity Types---
{{entity_types}}

{EXTRACTION_MARKER}
{{text}}
{INPUT_TEXT_END}"""

_USER_TAIL = """

---Output---
"""

_GLEANING_TEMPLATE = f"""

{GLEANING_HEADER}
The records listed below were extracted from the input text above; their descriptions and keywords are left out here. Some entities and relations were {GLEANING_MARKER}, and the records listed under ---Malformed Records--- were cut off, had fields missing or were in the wrong format.
1. Do not repeat a listed record.
2. Write every {GLEANING_MARKER} entity and relation in full, and a corrected, complete version of every malformed record.
3. Use exactly the line formats of the system instructions:
   {_ENTITY_FORMAT}
   {_RELATION_FORMAT}
   Entity types: {{entity_types}}.
4. Write in {{language}}. Output only records, then {_C} on a line of its own.

---Extracted Entities---
{{entities}}

---Extracted Relations---
{{relations}}

---Malformed Records---
{{malformed}}

---Output---
"""

_SUMMARY_TEMPLATE = f"""{SUMMARY_HEADER}
You maintain a knowledge graph. The descriptions below, one per line and each written as a JSON string, were collected for one entity or relation (named under ---Subject---) from different parts of the source documents. Merge them into a single description in plain text.
1. Use only information found in the descriptions. Keep every distinct fact and drop repetitions.
2. If two descriptions disagree, keep both statements and make clear they differ.
3. Write in the third person, in {{language}}. For an entity, start by naming it; for a relation, name both of its entities.
4. Keep it under about {{summary_length}} tokens.
5. Output only the merged description: no heading, quotes or commentary.

---Subject---
Kind: {{kind}}
Name: {{name}}

{SUMMARY_MARKER}
{{descriptions}}
{DESCRIPTIONS_END}

---Output---
"""


def extraction_messages(text: str, *, entity_types: Sequence[str], language: str) -> tuple[str, str]:
    """Return ``(system_prompt, user_prompt)`` for extracting from ``text``.

    The system prompt depends only on ``entity_types`` and ``language`` (so it
    can be cached by the provider); the user prompt carries ``text`` verbatim
    between ``---Input Text---`` and ``---End of Input Text---`` lines, near its end.
    """
    return _system(entity_types, language), _user_head(text, entity_types, language) + _USER_TAIL


def gleaning_messages(
    text: str,
    entities: Sequence[tuple[str, str]],
    relations: Sequence[tuple[str, str]],
    malformed: Sequence[str] = (),
    *,
    entity_types: Sequence[str],
    language: str,
) -> tuple[str, str]:
    """Return ``(system_prompt, user_prompt)`` asking for what an extraction of ``text`` missed.

    ``entities`` are the ``(name, type)`` and ``relations`` the ``(source, target)``
    of the records found so far, ``malformed`` the record lines to correct. The
    system prompt is the extraction's, and the user prompt starts with the
    extraction's up to the end of the chunk: what a gleaning pass needs of the
    first answer is which records it holds, not their descriptions, so it is sent
    those instead of the whole answer.
    """
    head = _user_head(text, entity_types, language)
    listed = {
        "entities": "\n".join(f"- {_one_line(n)} ({_one_line(t)})" for n, t in entities) or "(none)",
        "relations": "\n".join(f"- {_one_line(a)} — {_one_line(b)}" for a, b in relations) or "(none)",
        "malformed": "\n".join(f"- {_one_line(line)}" for line in malformed) or "(none)",
    }
    glean = _GLEANING_TEMPLATE.format(entity_types=_format_types(entity_types), language=language, **listed)
    return _system(entity_types, language), head + glean


def _one_line(value: str) -> str:
    return " ".join(str(value).split())


def _user_head(text: str, entity_types: Sequence[str], language: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"chunk text must be a string, got {type(text).__name__}")
    return _USER_HEAD.format(entity_types=_format_types(entity_types), language=language, text=text)


def _system(entity_types: Sequence[str], language: str) -> str:
    types = _format_types(entity_types)
    return _system_prompt(types, language)


@functools.lru_cache(maxsize=16)
def _system_prompt(types: str, language: str) -> str:
    """The extraction system prompt of a workspace (built once: every chunk sends it)."""
    return _SYSTEM_TEMPLATE.format(entity_types=types, language=language, examples=_render_examples())


def summary_prompt(
    kind: Literal["entity", "relation"],
    name: str,
    descriptions: Sequence[str],
    *,
    language: str,
    summary_length: int,
) -> str:
    """Return the prompt merging several ``descriptions`` of one entity or relation.

    ``name`` is shown as given (whitespace collapsed to one line). Each
    description is written on its own line as a JSON string literal.
    """
    if kind not in ("entity", "relation"):
        raise InvalidInput(f"summary kind must be 'entity' or 'relation', got {kind!r}")
    if not descriptions:
        raise InvalidInput("summary_prompt needs at least one description")
    if isinstance(summary_length, bool) or not isinstance(summary_length, int) or summary_length <= 0:
        raise ConfigurationError(f"summary_length must be a positive integer, got {summary_length!r}")
    lines = "\n".join(json.dumps(str(d), ensure_ascii=False) for d in descriptions)
    return _SUMMARY_TEMPLATE.format(
        kind=kind,
        name=" ".join(str(name).split()),
        language=language,
        summary_length=summary_length,
        descriptions=lines,
    )


def _format_types(entity_types: Sequence[str]) -> str:
    if isinstance(entity_types, str):
        entity_types = [entity_types]
    types = [t.strip() for t in entity_types if isinstance(t, str) and t.strip()]
    if not types:
        raise ConfigurationError("entity_types must name at least one type")
    return ", ".join(types)


def _render_examples() -> str:
    blocks = []
    for number, (text, lines) in enumerate(_EXAMPLES, start=1):
        blocks.append(f"Example {number} text:\n{text}\n\nExample {number} output:\n{lines}\n{_C}")
    return "\n\n".join(blocks)
