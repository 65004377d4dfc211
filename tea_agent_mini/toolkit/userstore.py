"""The user's tool directory (``<home>/tools``): saved versions, and loading files as tools.

Layout::

    tools/<name>.py                    the live code of a self-made tool
    tools/<name>.json                  {name, description, parameters, version, read_only, ...}
    tools/.versions/<name>/v<N>.py     every saved version, the live one included
    tools/.versions/<name>/v<N>.json
    tools/<other>.py                   a hand-written module with @tool functions (no .json)

A self-made tool counts as mutating (it needs approval under ``ask`` and is refused under
``never``): its code can do anything. Only the user can mark one read-only, by setting
``"read_only": true`` in ``tools/<name>.json`` by hand; the model has no say in it, and a newer
saved version is mutating again until the user marks it. The ``mutates`` key older versions wrote
was the model's word and is ignored.

Each file is imported on its own under a unique module name, so a broken file is reported with
its error and never stops the others from loading.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import itertools
import json
import logging
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tea_agent_mini.toolkit.registry import ToolSpec, specs_in
from tea_agent_mini.toolkit.usercode import (
    UserToolError,
    check_schema,
    missing_import_message,
    validate_tool_code,
)

logger = logging.getLogger(__name__)

TOOLS_DIR = "tools"
VERSIONS_DIR = ".versions"
USER_MODULE_PREFIX = "_tea_user_tool_"
ORIGIN_ATTR = "__tea_user_tool_origin__"
_module_ids = itertools.count(1)  # only makes module names unique; holds no other state

Stamp = tuple[int, int, int, int]  # (.py mtime_ns, .py size, .json mtime_ns, .json size)


@dataclass(frozen=True)
class ToolMeta:
    """The ``<name>.json`` of a self-made tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    version: int
    created: str
    read_only: bool = False  # set by the user's hand only, see the module docstring

    @classmethod
    def from_json(cls, text: str) -> ToolMeta:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            parameters=check_schema(data["parameters"]),
            version=int(data.get("version", 1)),
            created=str(data.get("created", "")),
            read_only=data.get("read_only") is True,
        )

    @property
    def mutates(self) -> bool:
        return not self.read_only

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class Origin:
    """Which file a loaded user module came from, and how that file looked then."""

    stem: str
    stamp: Stamp


class UserToolStore:
    """Files under ``<home>/tools``. Knows nothing about the live Toolkit."""

    def __init__(self, home: Path) -> None:
        self.dir = Path(home) / TOOLS_DIR

    def code_path(self, name: str) -> Path:
        return self.dir / f"{name}.py"

    def meta_path(self, name: str) -> Path:
        return self.dir / f"{name}.json"

    def version_path(self, name: str, version: int, suffix: str) -> Path:
        return self.dir / VERSIONS_DIR / name / f"v{version}{suffix}"

    def stems(self) -> list[str]:
        """Names of the ``.py`` files in the tools directory (hidden and ``_`` files skipped)."""
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.py") if not p.name.startswith((".", "_")))

    def stamp(self, stem: str) -> Stamp:
        code = _stat(self.code_path(stem))
        meta = _stat(self.meta_path(stem))
        return (*code, *meta)

    def read_meta(self, name: str) -> ToolMeta | None:
        """The tool's metadata, None for a hand-written module. Raises UserToolError if broken."""
        path = self.meta_path(name)
        if not path.exists():
            return None
        try:
            meta = ToolMeta.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError, UserToolError) as exc:
            raise UserToolError(f"{path.name} is not valid tool metadata: {exc}") from exc
        if meta.name != name:
            raise UserToolError(f"{path.name} names the tool {meta.name!r}, not {name!r}")
        return meta

    def versions(self, name: str) -> list[int]:
        folder = self.dir / VERSIONS_DIR / name
        if not folder.is_dir():
            return []
        found = {int(p.stem[1:]) for p in folder.glob("v*.py") if p.stem[1:].isdigit()}
        return sorted(v for v in found if self.version_path(name, v, ".json").exists())

    def read_version(self, name: str, version: int) -> tuple[str, ToolMeta]:
        """(code, metadata) of a stored version. Raises UserToolError when it does not exist."""
        if version not in self.versions(name):
            known = ", ".join(f"v{v}" for v in self.versions(name)) or "none"
            raise UserToolError(f"{name} has no version {version} (versions: {known})")
        code = self.version_path(name, version, ".py").read_text(encoding="utf-8")
        meta_text = self.version_path(name, version, ".json").read_text(encoding="utf-8")
        try:
            return code, ToolMeta.from_json(meta_text)
        except (ValueError, KeyError, TypeError) as exc:
            raise UserToolError(f"stored metadata of {name} v{version} is broken: {exc}") from exc

    def save(self, meta: ToolMeta, code: str) -> None:
        """Store ``meta.version`` under .versions and make it the live version."""
        self._archive_live(meta.name)
        self._write(self.version_path(meta.name, meta.version, ".py"), code)
        self._write(self.version_path(meta.name, meta.version, ".json"), meta.to_json())
        self._make_live(meta, code)

    def restore(self, name: str, version: int) -> ToolMeta:
        """Make a stored version the live one again (the other versions stay)."""
        code, meta = self.read_version(name, version)
        self._archive_live(name)
        self._make_live(meta, code)
        return meta

    def next_version(self, name: str) -> int:
        live = self.read_meta(name)
        return max([0, *self.versions(name), live.version if live else 0]) + 1

    def _archive_live(self, name: str) -> None:
        # A live version missing from .versions (written by hand or by an older build) is kept
        # before it gets replaced.
        live = self.read_meta(name) if self.meta_path(name).exists() else None
        if live is None or live.version in self.versions(name):
            return
        code = self.code_path(name).read_text(encoding="utf-8")
        self._write(self.version_path(name, live.version, ".py"), code)
        self._write(self.version_path(name, live.version, ".json"), live.to_json())

    def _make_live(self, meta: ToolMeta, code: str) -> None:
        # Metadata first: the .py's mtime marks the change that toolkit_reload looks for.
        self._write(self.meta_path(meta.name), meta.to_json())
        self._write(self.code_path(meta.name), code)

    @staticmethod
    def _write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)


def now_iso() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (0, -1)
    return (info.st_mtime_ns, info.st_size)


def load_module(stem: str, source: str, path: Path) -> ModuleType:
    """Run ``source`` as a fresh module with a unique name. Raises UserToolError on any failure.

    The source is compiled here rather than through the import system, so no stale bytecode
    cache can stand in for a file rewritten within the same second.
    """
    module_name = f"{USER_MODULE_PREFIX}{stem}_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:
        raise UserToolError(f"cannot create a module for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and typing look the module up here
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except ModuleNotFoundError as exc:
        sys.modules.pop(module_name, None)
        raise UserToolError(missing_import_message(exc.name or str(exc))) from exc
    # The second broad handler of the code base: this is foreign code running at an isolation
    # boundary, like the executor's, and whatever it raises must become a report.
    except (Exception, SystemExit) as exc:
        sys.modules.pop(module_name, None)
        raise UserToolError(
            f"{path.name} failed while loading: {type(exc).__name__}: {exc}"
        ) from exc
    return module


def forget_module(module_name: str) -> None:
    if module_name.startswith(USER_MODULE_PREFIX):
        sys.modules.pop(module_name, None)


def module_origin(spec: ToolSpec) -> Origin | None:
    """Where a user tool was loaded from; None for built-in tools."""
    if not spec.module.startswith(USER_MODULE_PREFIX):
        return None
    module = sys.modules.get(spec.module)
    origin = getattr(module, ORIGIN_ATTR, None)
    return origin if isinstance(origin, Origin) else Origin("?", (0, 0, 0, 0))


def self_made_spec(meta: ToolMeta, module: ModuleType) -> ToolSpec:
    func = getattr(module, meta.name, None)
    if not callable(func):
        raise UserToolError(f"{meta.name}.py defines no function {meta.name!r}")
    return ToolSpec(
        name=meta.name,
        description=meta.description,
        parameters=meta.parameters,
        func=func,
        mutates=meta.mutates,
        module=module.__name__,
    )


def load_file(store: UserToolStore, stem: str) -> list[ToolSpec]:
    """The tools of one file in the tools directory. Raises UserToolError when it cannot load."""
    path = store.code_path(stem)
    stamp = store.stamp(stem)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserToolError(f"cannot read {path.name}: {exc}") from exc
    meta = store.read_meta(stem)
    if meta is not None:
        validate_tool_code(stem, source, meta.parameters)
    module = load_module(stem, source, path)
    setattr(module, ORIGIN_ATTR, Origin(stem, stamp))
    if meta is not None:
        return [self_made_spec(meta, module)]
    specs = specs_in(module)
    if not specs:
        forget_module(module.__name__)
        raise UserToolError(
            f"{path.name} defines no tool: save it with toolkit_save (which writes "
            f"{stem}.json), or decorate its functions with tea_agent_mini.tool"
        )
    return specs


def load_user_tools(home: Path) -> tuple[list[ToolSpec], dict[str, str]]:
    """Every tool in ``<home>/tools``, and ``{file stem: error}`` for the files that failed.

    Each file loads in isolation; a failing one is reported and skipped. A tool name defined by
    two files is kept from the first (in name order) and reported for the second.
    """
    store = UserToolStore(home)
    specs: list[ToolSpec] = []
    errors: dict[str, str] = {}
    seen: dict[str, str] = {}
    for stem in store.stems():
        try:
            loaded = load_file(store, stem)
        except UserToolError as exc:
            errors[stem] = str(exc)
            logger.warning("user tool %s failed to load: %s", stem, exc)
            continue
        clash = [s.name for s in loaded if s.name in seen]
        if clash:
            errors[stem] = f"tool {clash[0]!r} is already defined by {seen[clash[0]]}.py"
            forget_module(loaded[0].module)
            continue
        seen.update((s.name, stem) for s in loaded)
        specs.extend(loaded)
    return specs, errors
