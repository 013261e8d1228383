"""The exception tree maps to the documented exit codes, in one place."""

from __future__ import annotations

import re

import pytest

from nlmsync import errors
from nlmsync.errors import exit_code_for


def _documented_tree() -> dict[str, int]:
    """Class name -> exit code, as written in the module docstring's tree."""
    assert errors.__doc__ is not None
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+Error|\w+Problem|\w+Failure) \[(\d)\]",
                                                             errors.__doc__)}


def test_every_error_class_is_in_the_documented_tree_with_its_exit_code() -> None:
    documented = _documented_tree()
    classes = {name: obj for name, obj in vars(errors).items()
               if isinstance(obj, type) and issubclass(obj, errors.NlmsyncError)}
    assert set(classes) == set(documented)
    for name, cls in classes.items():
        assert exit_code_for(cls("x")) == documented[name], name


@pytest.mark.parametrize(("exc", "code"), [
    (errors.ConfigError("bad key"), 2),
    (errors.CapacityError("full"), 3),
    (errors.ConnectionLostError("gone"), 4),
    (errors.AuthenticationRequiredError("login"), 5),
    (errors.PartialFailure("some failed"), 6),
    (errors.StateLockedError("another nlmsync is running on this vault (pid 7)"), 7),
    (errors.NotebookNotFoundError("notebook nb-x not found"), 2),
    (ValueError("boom"), 1),
])
def test_exit_codes_follow_the_design_table(exc: BaseException, code: int) -> None:
    assert exit_code_for(exc) == code


def test_notebooklm_errors_keep_the_servers_raw_message() -> None:
    err = errors.RateLimitedError("rate limited by the server", raw="RESOURCE_EXHAUSTED: quota", tool="source_add")
    assert err.raw == "RESOURCE_EXHAUSTED: quota"
    assert err.tool == "source_add"
    assert str(err) == "rate limited by the server"
