"""``python -m coterie`` runs the command line."""

import sys

from coterie.cli import main

sys.exit(main())
