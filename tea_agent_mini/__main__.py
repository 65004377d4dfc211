"""``python -m tea_agent_mini`` and the ``tea-agent-mini`` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from .cli.main import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
