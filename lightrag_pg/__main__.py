"""``python -m lightrag_pg``: the command line."""

import sys

from .cli import main

sys.exit(main())
