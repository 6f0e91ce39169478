"""`python -m oslr.cli`: the `oslr` command."""

from oslr.cli import entry

if __name__ == "__main__":  # pragma: no cover
    entry()
