"""nlmsync: keep a NotebookLM notebook stocked with the right notes from a markdown vault, and ask it."""

__version__ = "0.1.0"

__all__ = ["__version__"]
