"""A chain of folders nested deeper than Python's recursion limit, or longer than the system's longest path: made one
level at a time through open folders (a path that long cannot be named whole), and removed by the test itself without
recursion: `shutil.rmtree`, and so pytest's clean-up of old temporary folders, recurses once per level."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)


@contextmanager
def nested_folders(root: Path, depth: int, name: str, note: str) -> Iterator[str]:
    """`depth` folders named `name`, each in the one before, under `root`, the note `note` (a file name) in the
    deepest with a line of text; yields the note's vault path, and removes the chain on the way out."""
    fd = os.open(root, _DIR)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(out, b"# The deepest note\n\nWritten far below the vault's top, about abyssal trenches.\n")
        os.close(out)
    finally:
        os.close(fd)
    try:
        yield "/".join([name] * depth + [note])
    finally:
        _remove_chain(root, name)


def _remove_chain(root: Path, name: str) -> None:
    """Removes the chain of `name` folders under `root`: down it with every level held open, then each level's
    files and the level itself from the bottom up."""
    levels = [os.open(root, _DIR)]
    try:
        while True:
            try:
                levels.append(os.open(name, _DIR, dir_fd=levels[-1]))
            except FileNotFoundError:
                break
        for inner, outer in zip(reversed(levels[1:]), reversed(levels[:-1]), strict=True):
            for entry in os.listdir(inner):
                if entry != name:
                    os.unlink(entry, dir_fd=inner)
            os.rmdir(name, dir_fd=outer)
    finally:
        for fd in levels:
            os.close(fd)
