"""Command-line interface: serve | chat | run | tools | doctor | version."""
