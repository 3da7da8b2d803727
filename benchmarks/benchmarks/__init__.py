"""airspeed velocity (asv) suites for mipdp: see ``benchmarks/README.md``."""
