"""``python -m mipdp.cli``: the ``mipdp`` command."""

import sys

from . import main

sys.exit(main())
