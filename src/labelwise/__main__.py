"""``python -m labelwise``: the same command line as the ``labelwise`` script."""

from .cli import main

if __name__ == "__main__":
    main()
