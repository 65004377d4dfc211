"""One exception tree: every public exception class of the package roots at TeaAgentError, and
the tree drawn at the top of errors.py names each of them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tea_agent_mini
from tea_agent_mini import errors
from tea_agent_mini.errors import TeaAgentError


def package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(tea_agent_mini.__path__, "tea_agent_mini."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")  # a private signal that never leaves its module
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_roots_at_tea_agent_error():
    outside = [
        name for name, cls in package_exceptions().items() if not issubclass(cls, TeaAgentError)
    ]
    assert outside == []


def test_the_tree_in_errors_py_names_every_exception():
    tree = errors.__doc__ or ""
    names = {cls.__name__ for cls in package_exceptions().values()}
    grouped = {"TaskNotFound", "TaskBusy", "McpTransportError", "SessionExpired"}
    grouped |= {"McpProtocolError", "McpTimeout", "McpRpcError"}  # named with their parent
    missing = sorted(name for name in names - grouped if name not in tree)
    assert missing == []


def test_former_builtin_bases_are_kept():
    from tea_agent_mini.llm.repair import JSONRepairError
    from tea_agent_mini.server.turn_records import ShuttingDown
    from tea_agent_mini.server.uploads import UploadRejected

    assert issubclass(JSONRepairError, ValueError) and issubclass(UploadRejected, ValueError)
    assert issubclass(ShuttingDown, RuntimeError)
