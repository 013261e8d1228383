"""Results are checked field by field: a malformed answer names the field, never a KeyError."""

from __future__ import annotations

import pytest
from mcp_types import CallToolResult, TextContent

from nlmsync.errors import AuthenticationRequiredError, MalformedResponseError, ServerValidationError
from nlmsync.notebooklm.client import result_payload
from nlmsync.notebooklm.models import NotebookDetails, QueryAnswer, parse_result


def _text_result(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


def test_notebook_details_parse() -> None:
    details = parse_result("notebook_get", NotebookDetails, {
        "status": "success", "notebook": {"id": "n1", "title": "T", "source_count": 1, "url": "u"},
        "sources": [{"id": "s1", "title": "a.md · 1234"}], "extra": True})
    assert details.notebook.id == "n1"
    assert [s.id for s in details.sources] == ["s1"]


@pytest.mark.parametrize(("payload", "field"), [
    ({"notebook": {"id": "n1", "title": "T"}}, "sources"),
    ({"notebook": {"title": "T"}, "sources": []}, "notebook.id"),
    ({"notebook": {"id": "n1", "title": "T"}, "sources": [{"id": 5, "title": "x"}]}, "sources.0.id"),
    ({"notebook": {"id": "n1", "title": "T"}, "sources": "none"}, "sources"),
])
def test_malformed_details_name_the_field(payload: dict, field: str) -> None:
    with pytest.raises(MalformedResponseError) as info:
        parse_result("notebook_get", NotebookDetails, payload)
    assert f"'{field}'" in str(info.value)
    assert str(info.value).startswith("reading the notebook:")


def test_a_source_without_a_title_does_not_spoil_the_listing() -> None:
    details = parse_result("notebook_get", NotebookDetails, {
        "notebook": {"id": "n1", "title": "T"}, "sources": [{"id": "s1", "title": None}, {"id": "s2", "title": "b"}]})
    assert [(s.id, s.title) for s in details.sources] == [("s1", ""), ("s2", "b")]
    with pytest.raises(MalformedResponseError, match=r"'sources\.0\.title'"):
        parse_result("notebook_get", NotebookDetails, {"notebook": {"id": "n1", "title": "T"},
                                                       "sources": [{"id": "s1", "title": 7}]})


def test_query_answer_citation_keys_become_strings() -> None:
    answer = parse_result("notebook_query", QueryAnswer, {
        "answer": "A [1]", "conversation_id": "c", "citations": {1: "s1"},
        "references": [{"source_id": "s1", "citation_number": 1}]})
    assert answer.citations == {"1": "s1"}
    assert answer.references[0].cited_text is None


def test_payload_from_structured_content_or_json_text() -> None:
    structured = CallToolResult(content=[], structured_content={"status": "success", "x": 1})
    assert result_payload("t", structured)["x"] == 1
    assert result_payload("t", _text_result('{"status": "success", "y": 2}'))["y"] == 2


def test_payload_that_is_not_json_is_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="not a JSON object"):
        result_payload("notebook_get", _text_result("<html>oops</html>"))


def test_payload_without_status_is_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="'status'") as caught:
        result_payload("notebook_get", _text_result('{"notebook": {}}'))
    assert caught.value.message == "reading the notebook: malformed response from the server: field 'status' is None"
    with pytest.raises(MalformedResponseError) as caught:  # the payload kept as the raw text, cut at 500 characters
        result_payload("notebook_get", _text_result('{"notebook": "' + "x" * 600 + '"}'))
    assert caught.value.raw == str({"notebook": "x" * 600})[:500]


def test_in_band_error_payload_raises_its_class() -> None:
    with pytest.raises(AuthenticationRequiredError):
        result_payload("notebook_get", _text_result('{"status": "error", "error": "No authentication found."}'))


def test_tool_error_result_raises_by_text() -> None:
    with pytest.raises(ServerValidationError):
        result_payload("notebook_get", _text_result("1 validation error: Extra inputs are not permitted",
                                                    is_error=True))


def test_an_answer_with_another_status_and_an_error_is_an_in_band_error() -> None:
    """The real `refresh_auth` answers a login it could not renew with status "expired", not "error"."""
    from nlmsync.errors import AuthenticationRequiredError

    said = '{"status": "expired", "error": "Cached auth is no longer valid. Run `nlm login` in a terminal."}'
    with pytest.raises(AuthenticationRequiredError):
        result_payload("refresh_auth", _text_result(said))
