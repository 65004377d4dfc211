"""``python -m tea_agent_mini.server [--host H] [--port P] [--api-key K] [--profile NAME]``:
the same as ``tea-agent-mini serve``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from ..cli.main import main as cli_main

    return cli_main(["serve", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
