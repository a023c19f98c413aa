"""``python -m cuemem.cli``."""

from . import main

main()
