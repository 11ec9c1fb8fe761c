"""``python -m labelwise.cli``: the same command line as the ``labelwise`` script."""

from . import main

if __name__ == "__main__":
    main()
