"""The repository's studies (not installed): see ``experiments/README.md``."""
