"""``python -m chessscan``."""

from chessscan.cli import main

if __name__ == "__main__":
    main()
