"""`python -m plexity_plugins`: the `plexity` command (as `python -m plexity_plugins.cli`)."""

import sys

from .cli import main

sys.exit(main())
