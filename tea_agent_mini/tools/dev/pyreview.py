"""Static checks of Python source with the stdlib: compile, then a few AST rules.

Rules: syntax errors, unused imports, bare ``except:``, mutable default arguments, names that
shadow builtins, functions longer than a limit, and TODO/FIXME/XXX/HACK comments.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from dataclasses import dataclass

DEFAULT_MAX_FUNCTION_LINES = 80
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_TODO_RE = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b")
_MUTABLE_CALLS = frozenset({"list", "dict", "set", "bytearray", "defaultdict", "OrderedDict"})


@dataclass(frozen=True)
class Finding:
    line: int
    rule: str
    message: str
    severity: str = "warning"  # error | warning | info


def review_source(
    source: str, filename: str, max_function_lines: int = DEFAULT_MAX_FUNCTION_LINES
) -> list[Finding]:
    """All findings for one file, sorted by line."""
    try:
        tree = ast.parse(source, filename)
        compile(tree, filename, "exec", dont_inherit=True)  # what py_compile would check
    except SyntaxError as exc:
        text = f"{exc.msg}" + (f": {exc.text.strip()}" if exc.text else "")
        return [Finding(exc.lineno or 1, "syntax-error", text, "error")]
    except ValueError as exc:  # e.g. source with NUL bytes
        return [Finding(1, "syntax-error", str(exc), "error")]
    findings: list[Finding] = []
    if not filename.endswith("__init__.py"):  # imports there are usually re-exports
        findings += unused_imports(tree)
    findings += _node_checks(tree, max_function_lines)
    findings += todo_comments(source)
    return sorted(findings, key=lambda f: (f.line, f.rule))


def unused_imports(tree: ast.Module) -> list[Finding]:
    imported: dict[str, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                imported.setdefault(bound, (node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name != "*" and alias.asname != alias.name:  # "as same" re-exports
                    imported.setdefault(alias.asname or alias.name, (node.lineno, alias.name))
    used = _used_names(tree)
    return [
        Finding(line, "unused-import", f"'{full}' is imported but not used")
        for name, (line, full) in imported.items()
        if name not in used
    ]


def _used_names(tree: ast.Module) -> set[str]:
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            used |= _names_in_expression(node.value)  # string annotations, __all__ entries
    return used


def _names_in_expression(text: str) -> set[str]:
    """Names used by a string that is itself a Python expression; prose gives nothing."""
    if len(text) > 200:
        return set()
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _node_checks(tree: ast.Module, max_lines: int) -> list[Finding]:
    findings: list[Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            findings.append(
                Finding(
                    node.lineno,
                    "bare-except",
                    "bare 'except:' also catches KeyboardInterrupt and SystemExit; "
                    "name the exceptions (at least 'except Exception:')",
                )
            )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            findings += _function_checks(node, max_lines)
        elif isinstance(node, ast.ClassDef) and node.name in BUILTIN_NAMES:
            findings.append(_shadow(node.lineno, node.name, "class"))
        elif (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Store)
            and node.id in BUILTIN_NAMES
        ):
            findings.append(_shadow(node.lineno, node.id, "variable"))
    return findings


def _function_checks(node: ast.FunctionDef | ast.AsyncFunctionDef, max_lines: int) -> list[Finding]:
    findings = []
    if node.name in BUILTIN_NAMES:
        findings.append(_shadow(node.lineno, node.name, "function"))
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None and arg.arg in BUILTIN_NAMES:
            findings.append(_shadow(arg.lineno, arg.arg, f"parameter of {node.name}()"))
    for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
        if _is_mutable(default):
            findings.append(
                Finding(
                    default.lineno,
                    "mutable-default",
                    f"{node.name}() has a mutable default argument; it is shared between "
                    "calls. Use None and create the value inside the function",
                )
            )
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    length = (node.end_lineno or node.lineno) - first + 1
    if length > max_lines:
        findings.append(
            Finding(
                node.lineno,
                "long-function",
                f"{node.name}() is {length} lines long (limit {max_lines}); consider splitting it",
                "info",
            )
        )
    return findings


def _is_mutable(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in _MUTABLE_CALLS
    return False


def _shadow(line: int, name: str, what: str) -> Finding:
    return Finding(line, "shadowed-builtin", f"{what} '{name}' shadows the builtin {name}()")


def todo_comments(source: str) -> list[Finding]:
    findings = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and _TODO_RE.search(token.string):
                text = token.string.lstrip("#").strip()
                findings.append(Finding(token.start[0], "todo", text[:120], "info"))
    except (tokenize.TokenError, SyntaxError):
        pass  # already compiled, so only odd edge cases end up here
    return findings
