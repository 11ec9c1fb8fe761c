"""``python -m labelwise``: the same command line as the ``labelwise`` script."""

from .cli import app

if __name__ == "__main__":
    app(prog_name="labelwise")
