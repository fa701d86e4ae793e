"""``python -m coterie`` runs the command line."""

import sys

try:
    from coterie.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C before the command line could take over
    code = 130
sys.exit(code)
