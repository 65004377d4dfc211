"""Static checks on the source tree, run before anything is built."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import imports, whitelist
from .results import Check

STATIC_DIR = "tea_agent_mini/server/static"
SKILLS_DIR = "tea_agent_mini/skills"
SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
SKIP_SUFFIXES = (".pyc", ".pyo")


@dataclass
class SourcePlan:
    """What the wheel should hold, derived from the source and the manifest."""

    root: Path
    manifest: whitelist.Manifest
    modules: dict[str, whitelist.ToolModule]
    excluded: dict[str, str]
    files: list[str] = field(default_factory=list)  # package files the wheel must carry

    @property
    def shipped_tools(self) -> dict[str, list[str]]:
        return {
            name: [tool.name for tool in self.modules[name].tools]
            for name in self.manifest.shipped
            if name in self.modules
        }

    @property
    def tool_count(self) -> int:
        return sum(len(names) for names in self.shipped_tools.values())

    def data_files(self, prefix: str, pattern: str = "") -> list[str]:
        return [f for f in self.files if f.startswith(prefix + "/") and f.endswith(pattern)]


def plan(root: Path) -> SourcePlan:
    """Raises whitelist.WhitelistError when the manifest cannot be read."""
    manifest = whitelist.read_manifest(root)
    modules = whitelist.discover_modules(root)
    excluded = whitelist.excluded_entries(root)
    files = [f for f in package_files(root) if not whitelist.is_excluded(f, excluded)]
    return SourcePlan(root, manifest, modules, excluded, files)


def package_files(root: Path) -> list[str]:
    """Files under the package directory, as the backend sees them (no bytecode caches)."""
    base = root / whitelist.PACKAGE
    found = []
    for path in base.rglob("*"):
        rel = path.relative_to(root)
        cached = SKIP_DIRS.intersection(rel.parts) or path.name.endswith(SKIP_SUFFIXES)
        if path.is_file() and not cached and path.name != ".DS_Store":
            found.append(rel.as_posix())
    return sorted(found)


def run_all(root: Path) -> tuple[SourcePlan | None, list[Check]]:
    try:
        source = plan(root)
    except whitelist.WhitelistError as exc:
        return None, [Check("manifest", [str(exc)])]
    trees, parse = parse_shipped(source)
    checks = [
        check_manifest(source),
        parse,
        check_imports(source, trees),
        check_dependencies(root),
        check_data_files(source),
        check_entry_points(source, trees),
    ]
    return source, checks


def check_manifest(source: SourcePlan) -> Check:
    check = Check("manifest")
    shipped, excluded = source.manifest.shipped, source.manifest.excluded
    for name in sorted(set(shipped) & set(excluded)):
        check.fail(f"{name} is in both SHIPPED and EXCLUDED")
    allowed = imports.allowed_top_level(whitelist.PACKAGE)
    owners: dict[str, str] = {}
    for name in shipped:
        module = source.modules.get(name)
        if module is None:
            check.fail(f"SHIPPED names {name}, but {whitelist.module_path(name)} does not exist")
            continue
        if not module.tools and not module.problems:
            check.fail(f"SHIPPED names {name}, but it defines no @tool")
        for tool in module.tools:
            if tool.name in owners:
                check.fail(f"tool {tool.name} is defined by both {owners[tool.name]} and {name}")
            owners[tool.name] = name
            outside = [r for r in tool.requires if r.split(".")[0] not in allowed]
            if outside:
                check.fail(
                    f"{tool.path}:{tool.lineno}: tool {tool.name} requires {', '.join(outside)}, "
                    f"outside the runtime dependencies: move {name} to EXCLUDED"
                )
    for name, module in source.modules.items():
        if name in excluded or whitelist.under_excluded(name, excluded):
            continue  # an excluded module may need what the mini build lacks
        check.problems.extend(module.problems)
        if module.is_tool_module and name not in shipped:
            check.fail(f"tool module {name} is in neither SHIPPED nor EXCLUDED (left out for now)")
    check.detail = f"{source.tool_count} tools in {len(shipped)} shipped modules"
    return check


def parse_shipped(source: SourcePlan) -> tuple[dict[str, ast.Module], Check]:
    check = Check("parse")
    trees = {}
    for rel in source.files:
        if not rel.endswith(".py"):
            continue
        try:
            text = (source.root / rel).read_text(encoding="utf-8")
            trees[rel] = ast.parse(text, filename=rel)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError) as exc:
            check.fail(f"{rel}: {type(exc).__name__}: {exc}")
    check.detail = f"{len(trees)} modules parse"
    return trees, check


def check_imports(source: SourcePlan, trees: dict[str, ast.Module]) -> Check:
    check = Check("imports")
    allowed = imports.allowed_top_level(whitelist.PACKAGE)
    extras = imports.extra_top_level()
    count = 0
    for rel, tree in trees.items():
        for ref in imports.scan(tree, rel):
            count += 1
            if ref.top in imports.BANNED:
                check.fail(f"{ref.where()}: imports {ref.module}, which the package must never use")
            elif ref.top in extras:
                if not ref.in_function:
                    check.fail(
                        f"{ref.where()}: imports {ref.module} (an optional extra) when the module "
                        "loads; import it inside the function that needs it"
                    )
            elif ref.top not in allowed:
                check.fail(
                    f"{ref.where()}: imports {ref.module}, outside the stdlib and the runtime "
                    "dependencies"
                )
            elif ref.top == whitelist.PACKAGE:
                problem = _internal_import_problem(source, ref)
                if problem:
                    check.fail(f"{ref.where()}: {problem}")
    check.detail = f"{count} imports in {len(trees)} modules, all allowed"
    return check


def _internal_import_problem(source: SourcePlan, ref: imports.ImportRef) -> str:
    def shipped_state(dotted: str) -> str:
        rel = dotted.replace(".", "/")
        for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
            if (source.root / candidate).is_file():
                return "excluded" if whitelist.is_excluded(candidate, source.excluded) else "ok"
        return "missing"

    state = shipped_state(ref.module)
    if state != "ok":
        return f"imports {ref.module}, which is {state} in the wheel"
    for name in ref.names:
        if name != "*" and shipped_state(f"{ref.module}.{name}") == "excluded":
            return f"imports {ref.module}.{name}, which is excluded from the wheel"
    return ""


def check_dependencies(root: Path) -> Check:
    check = Check("dependencies")
    try:
        import tomllib
    except ImportError:  # Python 3.10: the list is checked again in the wheel's METADATA
        check.detail = "tomllib unavailable; checked in the wheel METADATA instead"
        return check
    with open(root / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle).get("project", {})
    declared = {requirement_name(r) for r in project.get("dependencies", [])}
    expected = set(imports.RUNTIME_IMPORTS)
    for name in sorted(declared - expected):
        check.fail(f"pyproject declares {name}, which is not a known mini runtime dependency")
    for name in sorted(expected - declared):
        check.fail(f"pyproject does not declare the runtime dependency {name}")
    check.detail = f"{len(declared)} runtime dependencies: {', '.join(sorted(declared))}"
    return check


def requirement_name(requirement: str) -> str:
    """``PyYAML>=5.4; python_version>'3'`` -> ``pyyaml`` (PEP 503 normalised)."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", name.group(1)).lower() if name else requirement


def check_data_files(source: SourcePlan) -> Check:
    check = Check("data files")
    static = source.data_files(STATIC_DIR)
    if not static:
        check.fail(f"{STATIC_DIR}/ is missing or empty: the wheel would have no web UI")
    skills = source.data_files(SKILLS_DIR, "SKILL.md")
    if (source.root / SKILLS_DIR).is_dir() and not skills:
        check.fail(f"{SKILLS_DIR}/ exists but holds no SKILL.md")
    check.detail = f"{len(static)} static files, {len(skills)} SKILL.md files"
    return check


def check_entry_points(source: SourcePlan, trees: dict[str, ast.Module]) -> Check:
    check = Check("entry points")
    for name, target in console_scripts(source.root).items():
        module, _, attr = target.partition(":")
        rel = next((r for r in trees if imports.module_name(r) == module), None)
        if rel is None:
            check.fail(f"{name} -> {target}: module {module} is not in the wheel")
        elif not _defines(trees[rel], attr.split(".")[0]):
            check.fail(f"{name} -> {target}: {rel} defines no top-level {attr}")
    check.detail = ", ".join(f"{k} -> {v}" for k, v in console_scripts(source.root).items())
    return check


def console_scripts(root: Path) -> dict[str, str]:
    try:
        import tomllib
    except ImportError:
        return {}
    with open(root / "pyproject.toml", "rb") as handle:
        return dict(tomllib.load(handle).get("project", {}).get("scripts", {}))


def _defines(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False
