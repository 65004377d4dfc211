"""Hatch build hook: the wheel carries only the tool modules that the toolkit manifest ships.

Enabled by ``[tool.hatch.build.hooks.custom]`` in pyproject.toml, so every wheel built by the
backend (``python -m build``, ``pip install .``, ``pip wheel``) applies the whitelist; editable
installs are left alone. Which modules to drop comes from ``scripts/buildlib/whitelist.py`` (AST
only, nothing imported). The sdist carries this file and that helper, so a wheel built from the
sdist applies the same whitelist.
"""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

WHITELIST_HELPER = "scripts/buildlib/whitelist.py"


def load_whitelist(root: str) -> ModuleType:
    path = Path(root) / WHITELIST_HELPER
    spec = importlib.util.spec_from_file_location("_tea_agent_mini_whitelist", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class body runs
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class ToolkitWhitelistHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._excluded: dict[str, str] = {}
        if self.target_name == "sdist":
            for rel in (Path(__file__).name, WHITELIST_HELPER):
                build_data["force_include"][str(Path(self.root) / rel)] = rel
            return
        if self.target_name != "wheel" or version == "editable":
            return
        whitelist = load_whitelist(self.root)
        self._excluded = whitelist.excluded_entries(Path(self.root))
        if not self._excluded:
            return
        # Hatchling has no build-data key for exclusions; extend the target's `exclude` setting
        # and drop the cached pathspec so it is rebuilt from it. finalize() verifies the result.
        config = self.build_config
        target = config.target_config
        inherited = target.get("exclude", config.build_config.get("exclude", []))
        target["exclude"] = [*inherited, *(f"/{entry}" for entry in self._excluded)]
        config.__dict__.pop("exclude_spec", None)
        for entry, reason in self._excluded.items():
            self.app.display_info(f"tea_agent_mini whitelist: leaving out {entry} ({reason})")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if not self._excluded:
            return
        with zipfile.ZipFile(artifact_path) as wheel:
            names = wheel.namelist()
        whitelist = load_whitelist(self.root)
        leaked = [name for name in names if whitelist.is_excluded(name, self._excluded)]
        if leaked:
            raise RuntimeError(f"excluded tool modules leaked into the wheel: {', '.join(leaked)}")
