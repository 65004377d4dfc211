"""Every import a module makes, found by AST at any nesting level, and what is allowed.

Counted: ``import x``, ``from x import y`` (relative ones resolved against the package),
``importlib.import_module("x")`` and ``__import__("x")`` with a literal name. Imports inside
``if TYPE_CHECKING:`` never run and are skipped.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

# Distribution name -> the import names it provides (documented ones only; transitive
# dependencies such as anyio or h11 are not declared and so not importable by contract).
RUNTIME_IMPORTS: dict[str, tuple[str, ...]] = {
    "httpx": ("httpx",),
    "pyyaml": ("yaml",),
    "requests": ("requests",),
    "starlette": ("starlette",),
    "uvicorn": ("uvicorn",),
    "python-multipart": ("multipart", "python_multipart"),
}

# Optional extra -> the import names it provides. The package may import them only inside a
# function, where a configured feature needs them (pg8000: a postgresql:// store.url), so that
# an install without the extra never loads them.
EXTRA_IMPORTS: dict[str, tuple[str, ...]] = {"postgres": ("pg8000",)}

# Never acceptable in the package, even where the stdlib has them (GUI toolkits).
BANNED: frozenset[str] = frozenset(
    {
        "numpy", "pydantic", "pydantic_core", "openai", "anthropic", "langchain", "litellm",
        "tkinter", "_tkinter", "turtle", "turtledemo", "idlelib", "PyQt5", "PyQt6", "PySide2",
        "PySide6", "wx", "gi", "kivy", "pygame", "torch", "tensorflow", "jax", "pandas", "scipy",
        "sklearn", "transformers", "sentence_transformers", "tiktoken", "onnxruntime",
        "playwright", "selenium", "PIL", "cv2", "fpdf", "jieba", "mcp", "psutil", "bs4", "lxml",
        "matplotlib", "zstandard",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ImportRef:
    """One import: the absolute dotted module name and where it appears."""

    module: str
    path: str
    lineno: int
    names: tuple[str, ...] = ()  # for ``from m import a, b``
    in_function: bool = False  # runs when the function is called, not when the module loads

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def where(self) -> str:
        return f"{self.path}:{self.lineno}"


def allowed_top_level(package: str) -> frozenset[str]:
    runtime = {name for names in RUNTIME_IMPORTS.values() for name in names}
    return frozenset((set(sys.stdlib_module_names) | runtime | {package}) - BANNED)


def extra_top_level() -> frozenset[str]:
    """The import names of the optional extras (allowed inside functions only)."""
    return frozenset(name for names in EXTRA_IMPORTS.values() for name in names)


def module_name(rel_path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``pkg/sub/__init__.py`` -> ``pkg.sub``."""
    parts = rel_path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def scan(tree: ast.Module, rel_path: str) -> list[ImportRef]:
    visitor = _ImportVisitor(rel_path)
    visitor.visit(tree)
    return visitor.found


class _ImportVisitor(ast.NodeVisitor):
    def __init__(self, rel_path: str) -> None:
        self.rel_path = rel_path
        self.found: list[ImportRef] = []
        self.depth = 0  # functions around the node being visited
        name = module_name(rel_path)
        self.package = name if rel_path.endswith("__init__.py") else name.rpartition(".")[0]

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module or "", node.level)
        names = tuple(alias.name for alias in node.names)
        self.found.append(ImportRef(base, self.rel_path, node.lineno, names, self.depth > 0))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dynamic = (isinstance(func, ast.Name) and func.id == "__import__") or (
            isinstance(func, ast.Attribute)
            and func.attr == "import_module"
            and isinstance(func.value, ast.Name)
            and func.value.id == "importlib"
        )
        if dynamic and node.args and isinstance(node.args[0], ast.Constant):
            target = node.args[0].value
            if isinstance(target, str) and not target.startswith("."):
                self._add(target, node.lineno)
        self.generic_visit(node)

    def _add(self, module: str, lineno: int) -> None:
        self.found.append(ImportRef(module, self.rel_path, lineno, in_function=self.depth > 0))

    def _absolute(self, module: str, level: int) -> str:
        if level == 0:
            return module
        parts = self.package.split(".")
        base = parts[: len(parts) - (level - 1)] if level > 1 else parts
        return ".".join([*base, module] if module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_exists(root: Path, dotted: str) -> bool:
    """Whether ``dotted`` is a module or package in the source tree under ``root``."""
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
