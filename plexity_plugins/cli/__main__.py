"""`python -m plexity_plugins.cli`: the `plexity` command."""

import sys

from . import main

sys.exit(main())
