"""The PATH arguments of a command as the app takes them: vault-relative.

On the command line a note or folder is named from where the user stands (relative to the current folder, or
absolute), or relative to the vault; the app and `serve` speak only vault-relative paths.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from nlmsync.errors import InputError
from nlmsync.vault import normalize_rel_path, resolve_in_vault


def vault_relative_args(vault_root: Path, args: Sequence[str]) -> list[str]:
    """Each of `args` that exists from the current folder inside the vault as its vault-relative path ("" for
    the vault itself); any other as it was given, to be read relative to the vault (the app refuses one that
    names nothing there). An argument that already is its vault-relative path is kept as written, so that
    messages name it as the user did."""
    root = vault_root.resolve()
    relative: list[str] = []
    for arg in args:
        candidate = Path(arg) if Path(arg).is_absolute() else Path.cwd() / arg
        rel: str | None = None
        if os.path.exists(candidate):  # False for a name longer than the system takes, as for no file
            try:
                rel = normalize_rel_path(candidate.resolve().relative_to(root).as_posix())
            except ValueError:
                rel = None
        relative.append(arg if rel is None or rel == normalize_rel_path(arg) else rel)
    return relative


def vault_relative_target(vault_root: Path, arg: str) -> str:
    """A file to be made (`ask --save FILE`), named as `vault_relative_args` names one; an absolute path inside
    the vault, which need not exist yet, as its vault-relative path. An absolute path elsewhere is passed on as
    written, for the app to refuse (it is never read as a path below the vault)."""
    if not Path(arg).is_absolute():
        return vault_relative_args(vault_root, [arg])[0]
    try:
        return normalize_rel_path(Path(arg).resolve().relative_to(vault_root.resolve()).as_posix())
    except (ValueError, OSError):
        return arg


def refuse_missing(vault_root: Path, args: Sequence[str]) -> None:
    """Refuse a vault-relative argument that names nothing in the vault before anything is opened (no state
    folder is made in a folder that may be no vault at all); when the vault is the current folder, the hint
    says so, for a user who forgot `--vault`.

    Raises:
        InputError: the first argument that names no note or folder of the vault.
        PathOutsideVaultError: an argument leads out of the vault.
    """
    for arg in args:
        if not os.path.exists(resolve_in_vault(vault_root, normalize_rel_path(arg))):
            here = Path.cwd()
            hint = (f"the vault is the current folder ({here}); pass --vault DIR to name another"
                    if vault_root.resolve() == here.resolve() else None)
            raise InputError(f"{arg}: no such note in the vault", hint=hint)
