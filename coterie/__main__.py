"""``python -m coterie`` runs the command line, as the ``coterie`` script does."""

import sys

from coterie.entry import main

sys.exit(main())
