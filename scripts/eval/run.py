"""Run the evaluation tasks against a model server; see README.md next to this file.

python scripts/eval/run.py --base-url http://127.0.0.1:8090/v1 --model qwen [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# teaeval lives next to this file; the repository root holds tea_agent_mini
for path in (HERE, HERE.parents[1]):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from teaeval.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
