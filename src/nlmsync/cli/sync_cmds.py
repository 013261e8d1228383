"""Commands of this area register themselves on the shared Typer app."""

from nlmsync.cli._app import app  # noqa: F401
