"""``python -m labelwise.cli``: the same command line as the ``labelwise`` script."""

from . import app

if __name__ == "__main__":
    app(prog_name="labelwise")
