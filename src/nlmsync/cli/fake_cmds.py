"""`nlmsync fake-server` (the offline NotebookLM twin, with fault switches) and `nlmsync server-info`.

The fake's switches are declared by the fake (`fake.faults`, imported with this module to register them:
`--server "fake …"` takes the same); the fake server, the MCP client and anyio are imported when these
commands run, not with the module.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from nlmsync.cli._app import app, cli_context, examples
from nlmsync.cli._output import emit_json, escape, stdout_console
from nlmsync.errors import UsageError
from nlmsync.fake.faults import fake_options, fake_switches

if TYPE_CHECKING:
    from nlmsync.notebooklm import Usage


@app.command("fake-server", epilog=examples(
    "nlmsync fake-server --transport http --port 0 --state fake.json   # prints http://127.0.0.1:PORT/mcp",
    'nlmsync --server "fake --capacity 5 --drop-on source_add:2:after" refresh notes/',
))
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              help="stdio, or http (streamable HTTP at /mcp).")
@click.option("--host", default="127.0.0.1", help="HTTP: address to listen on.")
@click.option("--port", type=int, default=0, help="HTTP: port; 0 picks a free one and prints the URL.")
@fake_switches
def fake_server(transport: str, host: str, port: int, **switches: Any) -> None:
    """Run the fake NotebookLM MCP server: the real tools and schemas, offline, with fault switches.

    Call counts for the fault switches start at 1 and, with --state, continue across restarts, so a client
    that reconnects after a dropped connection does not meet the same fault again.
    """
    try:
        options = fake_options(switches)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    import anyio

    from nlmsync.fake import FakeNotebookLM, build_fake_server
    from nlmsync.fake.server import serve_http

    fake = FakeNotebookLM(capacity=options.capacity, faults=options.faults, state_path=options.state)
    server = build_fake_server(fake, exit_on_drop=True)

    def announce(url: str) -> None:
        sys.stdout.write(url + "\n")
        sys.stdout.flush()

    try:
        if transport == "stdio":
            anyio.run(server.run_stdio_async)
        else:
            anyio.run(lambda: serve_http(server, host=host, port=port, announce=announce, on_shutdown=fake.save))
    except OSError as exc:
        raise UsageError(f"--host/--port: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    finally:
        fake.save()
        fake.close()


@app.command("server-info", epilog=examples(
    'nlmsync --server "notebooklm-mcp --transport stdio" server-info',
    "nlmsync --server http://127.0.0.1:8765/mcp server-info --json",
))
@click.option("--json", "json_output", is_flag=True, help="One JSON document on stdout.")
@click.pass_context
def server_info(ctx: click.Context, json_output: bool) -> None:
    """Check the NotebookLM MCP server: its version, its login state, that a notebook listing works, and the
    plan's usage allowance.

    A server that answers but is not logged in is reported as such (its version, "not logged in"), then the
    command exits 5 with the way to log in; one that cannot reach Google (no network) exits 4. With --json the
    document is printed either way.
    """
    settings = cli_context(ctx).settings()
    import anyio

    from nlmsync.app import Allowance
    from nlmsync.app.servers import connect_server
    from nlmsync.errors import AuthenticationRequiredError, NotebookLMError, exit_code_for

    report: dict[str, Any] = {"server": settings.server, "version": None, "auth_status": None, "logged_in": None,
                              "notebook_count": None, "plan": None, "allowance": None, "error": None,
                              "exit_code": 0, "hint": None}
    stopped: list[NotebookLMError] = []

    async def check() -> Usage | None:
        async with connect_server(settings) as client:
            try:
                info = await client.server_info()
                report.update(version=info.version, auth_status=info.auth_status)
                report["notebook_count"] = len((await client.notebook_list()).notebooks)
                report["logged_in"] = True
                return await Allowance().read(client)
            except NotebookLMError as exc:
                report["logged_in"] = False if isinstance(exc, AuthenticationRequiredError) else None
                report.update(error=exc.message, exit_code=exit_code_for(exc), hint=exc.hint)
                stopped.append(exc)
        return None

    usage = anyio.run(check)
    if usage is not None:
        report.update(plan=usage.plan.name, allowance=usage.model_dump(mode="json"))
    if json_output:
        emit_json(report)
    elif report["version"] is not None:
        _print_server_info(report, usage)
    if stopped:
        raise stopped[0]


def _print_server_info(report: dict[str, Any], usage: Usage | None) -> None:
    from nlmsync.cli._allowance import allowance_line, plan_line

    out = stdout_console()
    out.print(f"server:      {escape(str(report['server']))}")
    out.print(f"version:     {report['version']}")
    if report["logged_in"] is False:
        out.print(f"auth status: not logged in ({report['auth_status']})")
        return
    out.print(f"auth status: {report['auth_status']}")
    if report["logged_in"]:
        out.print(f"notebooks:   {report['notebook_count']}")
        if usage is not None:
            out.print(f"plan:        {escape(plan_line(usage))}")
        out.print(f"allowance:   {allowance_line(usage)}")
