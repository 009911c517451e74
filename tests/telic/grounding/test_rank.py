"""Tokenisation, request terms and the scoring weights of docs/protocol.md §4 item 9."""

from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

from telic.grounding import STOP_WORDS, tokenize
from telic.grounding._rank import BASENAME_TERM_SCORE, Scorer, request_terms


def _score(
    request: str, path: str, *, active: tuple[str, ...] = (), instruction: bool = False
) -> int:
    return Scorer(request_terms(request), active).scoring()(path, instruction)


def test_tokens_split_camel_case_lowercase_and_stem_plurals() -> None:
    assert tokenize("getHTTPResponses_v2.tsx") == ["get", "http", "response", "v2", "tsx"]
    assert tokenize("apiClient/parsers") == ["api", "client", "parser"]
    assert tokenize("class status bus analysis") == ["class", "status", "bus", "analysis"]
    assert tokenize("apps docs") == ["apps", "docs"]  # four letters or fewer keep their s


def test_the_stop_list_has_53_common_words_including_those_the_reference_names() -> None:
    assert len(STOP_WORDS) == 53
    named = {"a", "about", "check", "code", "fix", "file", "investigate", "project", "report"}
    assert named | {"review", "task", "you"} <= STOP_WORDS


def test_request_terms_drop_stop_words_and_single_characters() -> None:
    terms = request_terms("Please investigate the Parser files in src and fix a bug, x")
    assert terms.terms == {"parser", "src", "bug"}


def test_path_hints_are_slash_separated_request_substrings() -> None:
    hints = request_terms("See ./src/api.ts and apps/web/lib, not https or plain.").hints
    assert hints == ("src/api.ts", "apps/web/lib")


def test_the_reference_example_scores_as_observed() -> None:
    request = "Investigate the apps/web API client returning stale data"
    active = ("apps/web/src/api.ts", "AGENTS.md")
    assert _score(request, "apps/web/src/api.ts", active=active) == 1_050_400
    assert _score(request, "AGENTS.md", active=active, instruction=True) == 1_050_000


@pytest.mark.parametrize(
    ("path", "score"),
    [
        ("AGENTS.md", 1_000_000),  # pinned instruction
        ("src/billing/invoice.py", 10_000),  # below the active directory
        ("x/parser.c", 5_000 + 250),  # path hint + file-name term
        ("lib/x/parser.c", 5_000 + 250),  # "/"-suffix match of the hint
        ("lib/parser.c", 250),  # not a "/"-suffix match
        ("parsers/util.py", 75),  # directory term
        ("pyproject.toml", 20),  # root metadata
        ("README.rst", 20),
        ("tsconfig.base.json", 20),
        ("docs/pyproject.toml", 0),  # metadata counts only at the root
        ("docs/guide.md", 0),
    ],
)
def test_each_weight_applies(path: str, score: int) -> None:
    request = "The parser breaks, see x/parser.c"
    assert _score(request, path, active=("src/billing",), instruction=path == "AGENTS.md") == score


def test_an_exact_active_path_is_pinned_once() -> None:
    assert _score("nothing", "AGENTS.md", active=("AGENTS.md",), instruction=True) == 1_050_000


def test_terms_match_whole_tokens_only() -> None:
    assert _score("the api is slow", "src/rapid.py") == 0
    assert _score("the api is slow", "src/api.py") == 250
    assert _score("the api is slow", "api/rapid.py") == 75
    assert _score("the api is slow", "src/apiClient.ts") == 250


def test_a_term_in_the_file_name_is_not_counted_again_in_the_directory() -> None:
    assert _score("parser", "parser/parser.py") == 250
    assert _score("parser lexer", "lexer/parser.py") == 325


def test_an_ancestor_of_an_active_path_is_near_it() -> None:
    assert _score("nothing", "src", active=("src/app.py",)) == 10_000


def test_reasons_explain_the_score_in_words() -> None:
    scorer = Scorer(request_terms("the api client in web/api.ts"), ["web/api.ts"])
    reason = scorer.explain("web/api.ts", instruction=False)
    assert reason == (
        "Named as an active path; a path the request names: web/api.ts;"
        " request terms in the name: api, ts; request terms in the path: web"
    )
    assert scorer.explain("AGENTS.md", instruction=True).startswith("Agent instruction file")
    assert "low-relevance" in scorer.explain("zzz.txt", instruction=False)


def test_reasons_stay_short_whatever_the_request() -> None:
    request = " ".join(f"term{n}" for n in range(5000))
    path = "/".join(f"term{n}" for n in range(100)) + ".py"
    reason = Scorer(request_terms(request), ()).explain(path, instruction=False)
    assert len(reason) < 1_000
    assert reason.endswith("and 91 more")


NAME = st.text(alphabet=st.sampled_from("aAbBsSiIuU01._-"), max_size=16)


@given(NAME, st.lists(NAME, max_size=4))
@example("ababs", ["abab"])  # a plural in the name
@example("abAb.bIs", ["ab", "bis"])  # camelCase, and a word the stemmer keeps
def test_the_fast_file_name_match_agrees_with_tokenize(name: str, words: list[str]) -> None:
    request = " ".join(words)
    in_name = request_terms(request).terms & set(tokenize(name))
    assert _score(request, name) == BASENAME_TERM_SCORE * len(in_name)
