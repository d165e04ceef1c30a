"""`python -m seedbed` runs the command line."""

from seedbed.cli import main

main()
