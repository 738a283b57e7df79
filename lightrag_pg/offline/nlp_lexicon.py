"""Word lists of the offline extractor: how spaCy labels and head nouns map to entity types,
and which words are too generic to be entities.

Types are named as in ``config.DEFAULT_ENTITY_TYPES``; the extractor resolves them
against the configured ``entity_types`` (see ``_spacy_text.resolve_type``).
"""

from __future__ import annotations

NER_TYPES: dict[str, str] = {
    "PERSON": "Person",
    "ORG": "Organization",
    "NORP": "Organization",
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Location",
    "EVENT": "Event",
    "PRODUCT": "Artifact",
    "WORK_OF_ART": "Content",
    "LAW": "Content",
    "LANGUAGE": "Concept",
}
"""spaCy's named-entity labels as entity types (numeric and temporal labels are not entities)."""

NER_WEIGHTS: dict[str, float] = {
    "PERSON": 2.0,
    "GPE": 2.0,
    "LOC": 2.0,
    "FAC": 1.5,
    "EVENT": 2.0,
    "PRODUCT": 2.0,
}
"""How much a label counts as evidence for its type; the small model's ORG, NORP,
WORK_OF_ART, LAW and LANGUAGE labels are often wrong, so they count 1."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _typed(**groups: str) -> dict[str, str]:
    return {word: kind for kind, words in groups.items() for word in words.split()}


HEAD_TYPES: dict[str, str] = _typed(
    Organization="""company corporation firm organization organisation foundation university college
        institute association society committee council team agency department ministry government party
        union startup vendor publisher manufacturer consortium club school laboratory lab bank
        distributor retailer charity federation alliance board project""",
    Person="""person man woman founder author executive scientist physicist chemist engineer
        researcher professor student president ceo director maintainer volunteer programmer writer
        artist actor politician leader king queen chief spokesperson employee teacher doctor""",
    Location="""city town village country region province county continent island river lake
        mountain street road capital headquarters district territory principality kingdom state""",
    Event="""war battle conference meeting summit festival election ceremony outage incident launch
        tournament championship sprint prize award""",
    Artifact="""tool library package program application app software database store server client
        driver kernel system framework engine model extractor parser installer manager editor browser
        compiler interpreter distribution card processor chip device machine computer robot stick disk
        cd dvd architecture port layer pool cache index mirror proxy repository interface api script
        binary module plugin extension endpoint vehicle car ship aircraft phone camera instrument weapon
        container image toolkit shell daemon website tracker pipeline""",
    Data="""table column row record field dimension vector id identifier value threshold parameter
        setting variable dataset data log encoding degree weight score count statistic metric history
        top_k""",
    Method="""method technique algorithm approach search extraction retrieval generation fusion
        ranking chunking indexing filtering polling scan pass lock strategy procedure analysis learning
        training mode query similarity compression replication merging parsing tokenization embedding
        caching""",
    Content="""guide manual book faq prompt wiki policy document page article paper report list
        newsletter specification standard license letter post blog podcast song album film movie novel
        poem""",
)
"""A common noun heading a phrase (or naming what an entity is: "X is a package manager")
and the entity type it signals."""

NAME_HEADS: dict[str, str] = _typed(
    Organization="""inc inc. corp corp. corporation ltd ltd. llc gmbh ag company co co. group media
        robotics freight systems technologies labs foundation university college institute association
        society committee council team project agency bank airlines network department ministry party
        union league club school hospital press records studios motors pharmaceuticals consulting
        partners holdings logistics energy capital ventures community consortium""",
    Location="""city river mountain mount lake island street avenue road valley county province
        region bay sea ocean park square bridge airport station principality kingdom republic""",
    Event="""war conference summit festival olympics election revolution crisis championship cup expo
        prize award""",
    Artifact="""installer windows os server database library toolkit framework engine browser editor
        kernel driver sdk api app linux""",
    Content="guide manual wiki faq policy handbook journal review times post",
)
"""The last word of a multi-word proper name ("Acme Robotics", "Debian Installer"), or the
first before "of" ("University of Paris"), and the type it signals."""

ORG_VERBS = _words(
    """acquire buy hire employ partner invest sell fund sponsor announce sign merge sue ship stream
        license launch raise own operate manufacture"""
)
"""Verbs whose subject is most often an organization ("Spotify bought ...")."""

PERSON_VERBS = _words("say tell think believe marry die bear write found study teach discover prefer")
"""Verbs whose subject is most often a person."""

PERSON_TITLES = _words("mr mr. mrs mrs. ms ms. dr dr. prof prof. sir dame lord lady")

GENERIC_NOUNS = _words(
    """way thing part number lot kind type time people person user case example fact point purpose
        idea issue matter reason result set side sort stuff term use view word bit piece item place area
        level end start change form order question answer information detail note section chapter step
        moment day year week month hour minute second other one something everything anything nothing
        someone everyone anyone lot couple variety range deal amount majority meantime whole rest
        addition instance attempt experience need ability help job task option choice decision problem
        solution feature status name description list file files text value work mail email e-mail
        support edition thing things sense manner means aspect approach respect regard basis kind course
        effect end beginning line lines group groups system systems process string strings table tables
        store pass mode version many much few several all both each own others location subject state
        situation condition stage time times while lot lots size length total rest number numbers effort
        goal goals hand eye mind life world man woman men women child children friend friends member
        members individual individuals"""
)
"""Nouns too general to be entities on their own (they may still head a longer term)."""

GENERIC_ADJECTIVES = _words(
    """new old other many several specific particular different same whole entire full main certain
        various simple easy good great large small big little current first last next few own special
        important additional available possible official common usual real actual further more most less
        least much such similar related given following previous above below early late high low long
        short whole final initial total single multiple major minor recent modern latest greatest best
        better worse worst high-quality advanced quick fast slow strong weak sure clear complete correct
        right wrong true false general typical standard normal proper present complicated difficult hard
        various numerous separate individual appropriate respective necessary unable able likely
        unlikely powerful useful"""
)
"""Adjectives that do not make a noun a term ("several packages", "the whole system")."""

LIGHT_VERBS = _words(
    """be have do make get go take give use say see come know want need put set keep let seem become
        find show try call ask work tell run include allow provide contain"""
)
"""Verbs too general to be relation keywords on their own."""

VAGUE_HEADS = _words(
    """one ones way ways thing things lot lots sort sorts bit bits piece pieces rest variety range
        amount majority couple deal something anything everything nothing others other"""
)
"""Nouns that head no term, whatever modifies them ("high-level one", "user friendly way")."""

WEAK_HEADS = GENERIC_NOUNS - HEAD_TYPES.keys()
"""Generic nouns that head a term only with a noun before them ("entity type", not "several types")."""

CALENDAR_WORDS = _words(
    """january february march april may june july august september october november december monday
        tuesday wednesday thursday friday saturday sunday"""
)
"""Month and day names: dates, not names."""

ABBREVIATIONS = _words("etc etc. i.e i.e. e.g e.g. vs vs. cf cf. a.k.a a.k.a. approx approx. ca ca. no. nos.")
"""Abbreviations that look like code but are not names."""

WORD_PREFIXES = ("un", "re", "de", "pre", "non", "sub", "over", "under", "co", "multi", "inter", "dis", "mis")
"""Prefixes that make an unlisted word from a listed one ("unsubscribe", "re-run")."""

SQL_KEYWORDS = _words(
    """SELECT INSERT UPDATE DELETE FROM WHERE JOIN GRANT REVOKE CREATE ALTER DROP EXISTS TABLE INDEX
        SCHEMA VALUES RETURNING LIMIT ORDER GROUP BY ON AS AND OR NOT NULL WITH UNION USING SET BEGIN
        COMMIT ROLLBACK CASCADE EXECUTE FUNCTION TRIGGER USAGE PRIVILEGES ALL INTO LATERAL DISTINCT
        HAVING EXPLAIN ANALYZE VACUUM COPY TRUNCATE PRIMARY KEY REFERENCES CONSTRAINT DEFAULT VIEW
        MATCH RETURN MERGE OPTIONAL UNWIND CALL OWNER ROLE TRUE FALSE"""
)
"""SQL and Cypher keywords (upper case): an inline code span of one of them is code, not a name."""
