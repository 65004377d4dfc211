"""``tea-agent-mini skills learned [list|show|edit|promote|delete] [NAME]``: the skills the agent
learned from its work, with the operations of ``/v1/skills/learned`` (``evaluation/learned.py``).

``edit`` opens the SKILL.md in ``$VISUAL`` or ``$EDITOR`` (``vi`` without either), as git does,
or reads the new text from stdin with ``--stdin``. A text that does not parse changes nothing:
the reason is printed, and an edited copy is kept where the message says.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..evaluation.learned import LearnedSkill, LearnedSkillError, LearnedSkills
from .main import EXIT_CONFIG, EXIT_FAILED, EXIT_OK


def cmd_skills(args: argparse.Namespace) -> int:
    from ..config import load_config

    config = load_config(args.profile)
    if args.action != "list" and not args.name:
        print(f"error: skills learned {args.action} needs the skill's NAME", file=sys.stderr)
        return EXIT_CONFIG
    store = _open_store(config.db_path) if args.action in ("list", "show") else None
    try:
        skills = LearnedSkills.of(config.home, store)
        return ACTION_FUNCTIONS[args.action](skills, args)
    except LearnedSkillError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if store is not None:
            store.close()


def _open_store(path: Path) -> Any:
    """The store, for how the skills were used; None where there is no database yet."""
    if not path.exists():
        return None
    from ..store import Store

    return Store.open(path)


def _list(skills: LearnedSkills, args: argparse.Namespace) -> int:
    found = skills.all()
    if args.json:
        print(json.dumps([_json(skill) for skill in found], ensure_ascii=False, indent=2))
        return EXIT_OK
    if not found:
        print(f"no learned skills yet ({skills.root})")
        return EXIT_OK
    for skill in found:
        score = f"{skill.score}/5" if skill.score else "-"
        text = f"! {skill.problem}" if skill.problem else skill.description
        print(
            f"{skill.name:32} v{skill.version:<3} {score:4} {skill.learned_at or '-':10} "
            f"{_uses(skill):24} {text[:70]}"
        )
    print(f"\n{len(found)} learned skill(s) in {skills.root}")
    return EXIT_OK


def _show(skills: LearnedSkills, args: argparse.Namespace) -> int:
    skill, text, versions = (
        skills.get(args.name),
        skills.text(args.name),
        skills.versions(args.name),
    )
    if args.json:
        old = [{"version": v.version, "text": v.text} for v in versions]
        print(json.dumps({**_json(skill), "text": text, "versions": old}, ensure_ascii=False))
        return EXIT_OK
    print(f"# {skill.path}")
    print(f"# version {skill.version}; uses: {_uses(skill)}")
    if versions:
        print(f"# older versions: {', '.join(f'v{v.version}' for v in versions)}")
    print(text, end="" if text.endswith("\n") else "\n")
    return EXIT_OK


def _edit(skills: LearnedSkills, args: argparse.Namespace) -> int:
    before = skills.get(args.name).version
    copy: Path | None = None
    if args.stdin:
        text: str | None = sys.stdin.read()
    else:
        copy, text = _in_editor(skills.text(args.name), args.name)
    if text is None:
        return EXIT_FAILED
    try:
        skill = skills.edit(args.name, text)
    except LearnedSkillError as exc:
        kept = f"; your text is in {copy}" if copy else ""
        print(f"error: {exc} (nothing changed{kept})", file=sys.stderr)
        return EXIT_FAILED
    if copy is not None:
        copy.unlink(missing_ok=True)
    if skill.version == before:
        print(f"{skill.name}: no change")
    else:
        print(f"saved {skill.name} as version {skill.version} (the old text is kept)")
    return EXIT_OK


def _in_editor(text: str, name: str) -> tuple[Path, str | None]:
    """The text as the user left it in their editor (None: the editor failed)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    handle, raw = tempfile.mkstemp(prefix=f"{name}-", suffix=".SKILL.md")
    path = Path(raw)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    try:
        code = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
    except OSError as exc:
        code, problem = -1, f"cannot run the editor {editor!r}: {exc}"
    else:
        problem = f"the editor exited with {code}"
    if code != 0:
        print(f"error: {problem}; nothing changed", file=sys.stderr)
        path.unlink(missing_ok=True)
        return path, None
    return path, path.read_text(encoding="utf-8")


def _promote(skills: LearnedSkills, args: argparse.Namespace) -> int:
    path = skills.promote(args.name)
    print(f"promoted {args.name}: {path} is your own skill now")
    return EXIT_OK


def _delete(skills: LearnedSkills, args: argparse.Namespace) -> int:
    skills.delete(args.name)
    print(f"deleted the learned skill {args.name}")
    return EXIT_OK


ACTION_FUNCTIONS = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "promote": _promote,
    "delete": _delete,
}


def _uses(skill: LearnedSkill) -> str:
    use = skill.use
    if use is None:
        return "no uses recorded"
    retired = ", retired" if use.retired else ""
    return f"{use.uses} uses ({use.successes} ok, {use.failures} failed{retired})"


def _json(skill: LearnedSkill) -> dict[str, Any]:
    return {**skill.to_dict(), "path": str(skill.path)}
