"""``python -m mipdp.audit [--quick]``: print the audit table."""

from . import main

raise SystemExit(main())
