"""In-band errors and transport exceptions become the right `NotebookLMError` subclass and exit code."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from tests.notebooklm.protocol import USED_TOOLS

from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionLostError,
    MalformedResponseError,
    NotFoundError,
    RateLimitedError,
    ServerCapacityError,
    ServerCommandNotFoundError,
    ServerError,
    ServerTimeoutError,
    ServerUnreachableError,
    ServerValidationError,
    exit_code_for,
)
from nlmsync.fake.replies import AUTH_ERROR
from nlmsync.notebooklm.classify import (
    classify_exception,
    classify_in_band_error,
    classify_tool_error_text,
    doing,
)

REAL_AUTH_ERROR = {"status": "error", "error": AUTH_ERROR}


@pytest.mark.parametrize(("payload", "expected"), [
    (REAL_AUTH_ERROR, AuthenticationRequiredError),
    ({"status": "error", "error": "Credentials have expired."}, AuthenticationRequiredError),
    ({"status": "error", "error": "Notebook abc not found."}, NotFoundError),
    ({"status": "error", "error": "RPC error code 8 (RESOURCE_EXHAUSTED)"}, RateLimitedError),
    ({"status": "error", "error": "Source limit reached: 50 sources (maximum 50 sources per notebook)."},
     ServerCapacityError),
    ({"status": "error", "error": "Deletion not confirmed. Set confirm=True after user approval."},
     ServerValidationError),
    ({"status": "error", "error": "text is required for source_type='text'"}, ServerValidationError),
    ({"status": "error", "error": "Query failed: something odd"}, ServerError),
    # The real server's own wordings (notebooklm_tools 0.15.8: core/base.py, services/*.py).
    ({"status": "error", "error": "RPC Error 16: Authentication expired"}, AuthenticationRequiredError),
    ({"status": "error", "error": "Authentication expired. Run 'nlm login' in your terminal to re-authenticate."},
     AuthenticationRequiredError),
    ({"status": "error", "error": "Failed to get notebook: API error (code 5): NOT_FOUND"}, NotFoundError),
    ({"status": "error", "error": "API error (code 8): You have reached your daily limit."}, RateLimitedError),
    ({"status": "error", "error": "API error (code 3): INVALID_ARGUMENT"}, ServerValidationError),
    ({"status": "error", "error": "NotebookLM did not respond within the configured query timeout."},
     ServerTimeoutError),
    ({"status": "error", "error": "The read operation timed out"}, ServerTimeoutError),
    ({"status": "error"}, ServerError),
])
def test_in_band_errors_are_classified_by_message(payload: dict, expected: type) -> None:
    error = classify_in_band_error("notebook_get", payload)
    assert type(error) is expected
    assert error.tool == "notebook_get"
    if isinstance(payload.get("error"), str):
        assert error.raw == payload["error"]


def test_error_details_category_wins_over_the_message() -> None:
    payload = {"status": "error", "error": "NotebookLM temporarily rejected the query (not found wording)",
               "error_details": {"category": "resource_exhausted", "provider_code": 8}}
    error = classify_in_band_error("notebook_query", payload)
    assert isinstance(error, RateLimitedError)
    assert error.details["provider_code"] == 8


def test_server_side_query_deadline_is_a_timeout_with_exit_4() -> None:
    # What the real server answers when `notebook_query(timeout=…)` runs out (services/chat.py).
    payload = {"status": "error", "error": "NotebookLM did not respond within the configured query timeout.",
               "hint": "Retry with a longer timeout, such as 180 seconds.",
               "error_details": {"category": "deadline_exceeded", "retryable": True,
                                 "suggested_action": "retry_with_longer_timeout",
                                 "debug_code": "query_deadline_exceeded"}}
    error = classify_in_band_error("notebook_query", payload)
    assert type(error) is ServerTimeoutError
    assert exit_code_for(error) == 4
    assert error.message == "asking the notebook: NotebookLM did not respond within the configured query timeout."
    assert error.hint is not None and "query_timeout" in error.hint


def test_unknown_category_falls_back_to_the_message() -> None:
    payload = {"status": "error", "error": "Notebook x not found.", "error_details": {"category": "mystery"}}
    assert isinstance(classify_in_band_error("notebook_get", payload), NotFoundError)


def test_auth_error_is_one_line_with_a_login_hint_and_exit_5() -> None:
    error = classify_in_band_error("notebook_list", REAL_AUTH_ERROR)
    assert "\n" not in error.message
    assert "No authentication found" in error.message
    assert error.hint is not None and "nlm login" in error.hint
    assert exit_code_for(error) == 5
    assert error.raw == AUTH_ERROR


def test_server_hint_is_kept() -> None:
    error = classify_in_band_error("notebook_get", {"status": "error", "error": "Notebook x not found.",
                                                    "hint": "Run 'nlm notebook list'."})
    assert error.hint == "Run 'nlm notebook list'."


def test_tool_error_text_for_rejected_arguments_is_a_validation_error() -> None:
    text = "1 validation error for call[notebook_get]\nbogus\n  Unexpected keyword argument"
    error = classify_tool_error_text("notebook_get", text)
    assert isinstance(error, ServerValidationError)
    assert exit_code_for(error) == 2


def test_missing_command_is_not_a_connection_problem() -> None:
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [FileNotFoundError(2, "No such file", "nlm-x")])])
    error = classify_exception(nested, tool="server_info", phase="connect")
    assert isinstance(error, ServerCommandNotFoundError)
    assert "nlm-x" in error.message
    assert exit_code_for(error) == 4


def _missing(command: str) -> ServerCommandNotFoundError:
    error = classify_exception(FileNotFoundError(2, "No such file", command), tool="server_info", phase="connect")
    assert isinstance(error, ServerCommandNotFoundError) and error.message.endswith(command)
    return error


@pytest.mark.parametrize("command", ["nlm", "/opt/tools/bin/notebooklm-mcp"])
def test_a_missing_real_server_says_how_to_install_it(command: str) -> None:
    assert _missing(command).hint == ("the real NotebookLM server is not installed here: pip install "
                                      "notebooklm-mcp-cli (or uv tool install notebooklm-mcp-cli), then nlm login; "
                                      "or try nlmsync offline with --server fake")


def test_a_missing_command_names_where_it_was_looked_for(tmp_path: Path) -> None:
    assert _missing("my-server").hint == "check --server (or NLMSYNC_SERVER); is the server installed?"
    assert _missing(str(tmp_path / "bin" / "server")).hint == (
        "check --server (or NLMSYNC_SERVER): is the server installed at that path? A path with spaces is quoted "
        "inside it: --server \"'/My Tools/server' --transport stdio\"")


def test_a_path_cut_at_a_space_names_the_folder_it_was_cut_from(tmp_path: Path) -> None:
    for name in ("My Tools 2", "My Tools", "Mystery"):  # the first of those that go on after a space, sorted
        (tmp_path / name).mkdir()
    assert _missing(str(tmp_path / "My")).hint == (
        f"the path looks cut at a space ('{tmp_path / 'My Tools'}' exists): quote it inside --server, as in "
        f"--server \"'{tmp_path / 'My Tools'}{os.sep}…' --transport stdio\"")


LOST = "reading the notebook: connection to the server lost: "


@pytest.mark.parametrize(("exc", "phase", "expected", "message", "raw"), [
    (MCPError(CONNECTION_CLOSED, "Connection closed"), "call", ConnectionLostError, LOST + "Connection closed",
     "Connection closed"),
    (MCPError(CONNECTION_CLOSED, "Connection closed"), "connect", ServerUnreachableError,
     "cannot connect to the server: Connection closed", "Connection closed"),
    (MCPError(REQUEST_TIMEOUT, "Timed out"), "call", ServerTimeoutError,
     "reading the notebook: the server did not answer in time", "Timed out"),
    (TimeoutError(), "call", ServerTimeoutError, "reading the notebook: the server did not answer in time", ""),
    (ExceptionGroup("g", [httpx2.ConnectError("refused")]), "connect", ServerUnreachableError,
     "cannot connect to the server: refused", "refused"),
    (ExceptionGroup("g", [httpx2.RemoteProtocolError("peer closed")]), "call", ConnectionLostError,
     LOST + "peer closed", "peer closed"),
    (BrokenPipeError(), "call", ConnectionLostError, LOST + "BrokenPipeError", "BrokenPipeError"),
    (MCPError(-32602, "Invalid params: notebook_id"), "call", ServerValidationError,
     "reading the notebook: Invalid params: notebook_id", "Invalid params: notebook_id"),
    (RuntimeError("bug"), "call", ServerError, "reading the notebook: unexpected RuntimeError talking to the server: bug",
     "bug"),
    (PermissionError(13, "Permission denied", "/opt/nlm"), "connect", ServerCommandNotFoundError,
     "MCP server command not executable: /opt/nlm", "[Errno 13] Permission denied: '/opt/nlm'"),
])
def test_transport_exceptions(exc: BaseException, phase: str, expected: type, message: str, raw: str) -> None:
    """Each becomes its error, saying what nlmsync was doing, with the tool called and the exception's own words
    (`raw`, which a caller matches on); an MCP error keeps its code."""
    error = classify_exception(exc, tool="notebook_get", phase=phase)  # type: ignore[arg-type]
    assert (type(error), error.message, error.tool, error.raw) == (expected, message, "notebook_get", raw)
    assert error.details == ({"mcp_code": exc.code} if isinstance(exc, MCPError) and expected is ServerValidationError
                             else {})


def test_pydantic_validation_failure_is_malformed() -> None:
    from pydantic import BaseModel, ValidationError

    class M(BaseModel):
        x: int

    with pytest.raises(ValidationError) as info:
        M.model_validate({"x": "no"})
    assert isinstance(classify_exception(info.value, tool="notebook_get", phase="call"), MalformedResponseError)


@pytest.mark.parametrize(("said", "message"), [
    ("source_add failed: RPC error code 8 (RESOURCE_EXHAUSTED): rate limit exceeded, retry later.",
     "uploading to the notebook failed: RPC error code 8 (RESOURCE_EXHAUSTED): rate limit exceeded, retry later."),
    ("source_add: quota", "uploading to the notebook: quota"),
    ("Source limit reached", "uploading to the notebook: Source limit reached"),
    ("source_added twice", "uploading to the notebook: source_added twice"),
])
def test_the_message_says_what_nlmsync_was_doing_never_the_tools_name(said: str, message: str) -> None:
    assert classify_in_band_error("source_add", {"status": "error", "error": said}).message == message


@pytest.mark.parametrize("said", [
    "[Errno -2] Name or service not known",  # Linux, the resolver
    "[Errno -3] Temporary failure in name resolution",
    "[Errno 8] nodename nor servname provided, or not known",  # macOS
    "[Errno 11001] getaddrinfo failed",  # Windows
    "[Errno 101] Network is unreachable",
    "Could not reach NotebookLM while verifying the session.",  # the real server's own words
])
def test_a_server_that_cannot_reach_google_is_exit_4_with_a_hint_about_the_network(said: str) -> None:
    from nlmsync.errors import GoogleUnreachableError

    error = classify_in_band_error("notebook_list", {"status": "error", "error": said})
    assert isinstance(error, GoogleUnreachableError) and exit_code_for(error) == 4
    assert error.message == f"listing the notebooks: the NotebookLM server could not reach Google ({said})"
    assert error.hint is not None and "network" in error.hint



@pytest.mark.parametrize("tool", sorted(USED_TOOLS))
@pytest.mark.parametrize("said", ["Authentication expired", "[Errno -2] Name or service not known", "Internal error",
                                  "{tool} failed: Internal error"])
def test_an_error_of_every_tool_says_what_nlmsync_was_doing_not_the_tools_name(tool: str, said: str) -> None:
    error = classify_in_band_error(tool, {"status": "error", "error": said.format(tool=tool)})
    assert error.message.startswith(f"{doing(tool)}") and tool not in error.message and error.tool == tool
    assert tool not in doing(tool)


def test_a_hint_that_is_not_text_is_left_out() -> None:
    error = classify_in_band_error("notebook_get", {"status": "error", "error": "Notebook abc not found.",
                                                    "hint": ["not", "text"]})
    assert isinstance(error, NotFoundError) and error.hint is None
    said = classify_in_band_error("notebook_get", {"status": "error", "error": "Notebook abc not found.",
                                                   "hint": "check the id"})
    assert said.hint == "check the id"
