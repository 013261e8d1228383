"""`python -m nlmsync` runs the command line."""

from nlmsync.cli import main

if __name__ == "__main__":
    main()
