"""The development sets' builders: Debian documentation cut into passages, HippoRAG's records
into questions and corpus, set cuts, and the defaults rule of the retrieval harness."""

from __future__ import annotations

from bench.debian_docs import html_blocks
from bench.doc_faqs import ZSH_HEADING, headed_items, parse_gitfaq
from bench.git_docs import page_sections
from bench.multihop import DEPTHS, Row, targets, verdict
from bench.multihop_data import build, records_of, shape_error
from bench.sets import Ask, Doc, EvalSet

WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
ANSWER = " ".join([WORDS] * 2)

ZSH = (
    "<html><head><title>Z-Shell FAQ</title></head><body><h1>Chapter 3</h1>"
    "<h2>3.1: Why does <code>$var</code> not split?</h2><p>" + ANSWER + "</p><pre>  a\n  b</pre>"
    "<h2>3.2: In which startup file do I put...?</h2><p>Too short.</p>"
    "<h2>3.3: Startup files</h2><p>" + ANSWER + "</p></body></html>"
)

GITFAQ = f"""gitfaq(7)
=========

Configuration
-------------

[[user-name]]
What should I put in `user.name`?::
\tYou should put your personal name. {ANSWER}
+
See linkgit:git-config[1].

[[short]]
Is this short?::
\tYes.

Credentials
-----------

[[http-credentials]]
How do I specify my credentials when pushing over HTTP?::
\t{ANSWER}
"""

GIT_PAGE = (
    "<h1>git-push(1)</h1><h2>NAME</h2><p>git-push - Update remote refs</p>"
    "<h2>DESCRIPTION</h2><p>Updates remote refs. When no refspec is given, push.default decides. "
    + WORDS
    + "</p><h2>OPTIONS</h2><dl><dt>--all</dt><dd><p>Push all branches. "
    + WORDS
    + "</p></dd><dt>-f</dt><dt>--force</dt><dd><p>Usually refused. "
    + WORDS
    + "</p><dl><dt>nested</dt><dd>inner text here</dd></dl></dd></dl>"
    "<h2>CONFIGURATION</h2><p>" + WORDS + "</p><h3>push.default</h3><p>" + WORDS + "</p>"
)


def test_html_faq_sections_are_questions_with_long_answers() -> None:
    items = headed_items(html_blocks(ZSH), ZSH_HEADING, "h2")
    assert [(i.number, i.question) for i in items] == [("3.1", "Why does $var not split?")]
    assert items[0].answer.startswith(ANSWER) and items[0].answer.endswith("  a\n  b")


def test_gitfaq_items_end_at_the_next_anchor_or_section_title() -> None:
    items = parse_gitfaq(GITFAQ)
    assert [(i.number, i.question) for i in items] == [
        ("user-name", "What should I put in user.name?"),
        ("http-credentials", "How do I specify my credentials when pushing over HTTP?"),
    ]
    assert items[0].answer.endswith("See git-config(1).")
    assert "Credentials" not in items[1].answer and "Credentials" not in items[0].answer


def test_manual_pages_are_cut_at_headings_and_top_level_terms() -> None:
    sections = page_sections("git-push", GIT_PAGE)
    assert [(s.heading, s.path) for s in sections] == [
        ("DESCRIPTION", "git-doc/git-push.html#description"),
        ("--all", "git-doc/git-push.html#all"),
        ("-f, --force", "git-doc/git-push.html#f-force"),
    ]
    assert "inner text here" in sections[2].body
    assert sections[0].document.startswith("DESCRIPTION\n\nUpdates remote refs.")


def test_hipporag_records_become_questions_over_their_paragraphs() -> None:
    musique = [
        {
            "id": "q1",
            "question": "Who?",
            "answer": "A",
            "answer_aliases": [],
            "paragraphs": [
                {"title": "X", "paragraph_text": "x", "is_supporting": False},
                {"title": "Y", "paragraph_text": "y", "is_supporting": True},
            ],
        },
        {
            "id": "q2",
            "question": "Where?",
            "answer": "B",
            "answer_aliases": [],
            "paragraphs": [
                {"title": "Y", "paragraph_text": "y", "is_supporting": True},
                {"title": "Z", "paragraph_text": "z", "is_supporting": True},
            ],
        },
    ]
    questions, corpus = build("musique", musique)
    assert corpus == [{"title": t, "text": t.lower()} for t in "XYZ"]
    assert [q["supporting_passage_ids"] for q in questions] == [[1], [1, 2]]
    hotpot = [
        {
            "_id": "h1",
            "question": "Which?",
            "answer": "C",
            "type": "comparison",
            "level": "easy",
            "supporting_facts": [["B", 0], ["A", 1], ["B", 1]],
            "context": [["A", ["a1.", " a2."]], ["B", ["b."]], ["D", ["d."]]],
        }
    ]
    questions, corpus = build("hotpotqa", hotpot)
    assert corpus[0] == {"title": "A", "text": "a1. a2."}
    assert questions[0]["supporting_titles"] == ["B", "A"]
    assert questions[0]["supporting_passage_ids"] == [1, 0]


def test_further_records_are_read_as_json_or_json_lines_and_checked_for_shape() -> None:
    one, two = {"id": "a"}, {"id": "b"}
    assert records_of(b'[{"id": "a"}, {"id": "b"}]') == [one, two]
    assert records_of(b'{"id": "a"}\n\n{"id": "b"}\n') == [one, two]
    paragraphs = [{"title": str(i), "paragraph_text": "t", "is_supporting": i < 2} for i in range(20)]
    musique = {
        "id": "2hop__1_2",
        "question": "Who?",
        "paragraphs": paragraphs,
        "question_decomposition": [{}, {}],
    }
    assert shape_error("musique", musique) is None
    assert shape_error("musique", {**musique, "paragraphs": paragraphs[1:]}) is not None
    assert shape_error("musique", {**musique, "question_decomposition": [{}]}) is not None
    hotpot = {
        "_id": "h1",
        "question": "Which?",
        "type": "bridge",
        "supporting_facts": [["A", 0], ["B", 0]],
        "context": [["A", ["a."]], ["B", ["b."]]],
    }
    assert shape_error("hotpotqa", hotpot) is None
    assert shape_error("hotpotqa", {**hotpot, "context": [["A", ["a."]]]}) is not None
    assert shape_error("hotpotqa", {"question": "no context"}) is not None


def _set(grouped: bool) -> EvalSet:
    docs = tuple(Doc(str(i), f"p/{i}", "t") for i in range(6))
    asks = (Ask("a", ("p/0", "p/1")), Ask("b", ("p/2", "p/5")))
    return EvalSet("s", "s", "multihop", docs, asks, grouped=grouped)


def test_a_cut_keeps_the_first_passages_or_every_gold_one() -> None:
    grouped = _set(True).cut(4)
    assert [d.path for d in grouped.docs] == ["p/0", "p/1", "p/2", "p/3"]
    assert [a.text for a in grouped.asks] == ["a"] and grouped.limit == 4
    spread = _set(False).cut(5)
    assert [d.path for d in spread.docs] == ["p/0", "p/1", "p/2", "p/3", "p/5"]
    assert len(spread.asks) == 2
    assert _set(True).cut(0).limit == 0 and _set(True).cut(10).docs == _set(True).docs


def _row(name: str, mode: str, lexical: bool, r5: float, mrr: float) -> Row:
    return Row(name, "multihop", 10, 5, mode, lexical, dict.fromkeys(DEPTHS, r5), mrr, 0.1, 0.01)


def test_the_defaults_rule_allows_losses_of_one_point_at_most() -> None:
    rows = [
        _row("a", "mix", True, 0.80, 0.70),
        _row("b", "mix", True, 0.90, 0.80),
        _row("a", "mix+bridge", True, 0.90, 0.70),
        _row("b", "mix+bridge", True, 0.895, 0.795),
        _row("a", "naive", True, 0.95, 0.70),
        _row("b", "naive", True, 0.85, 0.80),
    ]
    lines = {line.split(":")[0]: line for line in verdict(rows)}
    assert "may replace" in lines["mix+bridge lexical on"]
    assert "may not replace" in lines["naive lexical on"]
    assert "worst -5.0 (b (10 p.)" in lines["naive lexical on"]


def test_targets_ask_ten_points_over_naive_and_faqs_near_their_best() -> None:
    hop = [
        _row("a", "naive", True, 0.60, 0.7),
        _row("a", "mix+bridge", True, 0.71, 0.7),
        _row("a", "mix", True, 0.65, 0.7),
    ]
    faq = [
        Row("f", "faq", 10, 5, mode, True, dict.fromkeys(DEPTHS, r5), r5, 0.1, 0.01)
        for mode, r5 in (("naive", 0.90), ("mix+bridge", 0.895), ("mix", 0.85))
    ]
    lines = {line.split(":")[0]: line for line in targets(hop + faq)}
    assert lines["mix+bridge lexical on"].endswith("targets met")
    assert lines["mix lexical on"].endswith("targets not met")
    assert "R@5 over naive at least +11.0 (a (10 p.))" in lines["mix+bridge lexical on"]
