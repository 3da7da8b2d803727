"""``python -m mipdp``: the command line."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:      # Ctrl-C while the package loads: one line, no traceback
    print("\nmipdp: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
