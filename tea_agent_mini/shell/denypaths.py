"""Paths as the deny-list compares them: canonical text, and which ones are off limits.

Only the text is looked at (no symlinks are followed, nothing is read from disk): ``//``,
``/./``, ``/usr/..`` and trailing slashes collapse; ``~`` stays ``~``; a relative path is
joined to a known working directory or stays unknown.
"""

from __future__ import annotations

import fnmatch
import re

# fmt: off
# removing, moving or changing ownership of these (or all their entries) is refused
SYSTEM_DIRS = frozenset({
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
    "/var", "/usr/bin", "/usr/include", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/local",
    "/usr/sbin", "/usr/share", "/var/cache", "/var/lib", "/var/log",
})
# writing into these (redirections, tee, dd) or removing a file in them is refused
SYSTEM_FILES = (
    "/etc", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin",
    "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/sys", "/proc/sys",
    "/proc/sysrq-trigger",
)
# fmt: on
DISK = re.compile(
    r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk/|loop|md|dm-|mapper/|nbd|sr|rbd|zd|fd\d|"
    r"mem$|kmem$|port$|root$)"
)
HARMLESS_DEVICES = re.compile(
    r"^/dev/(?:null|zero|full|u?random|tty\w*|std(?:in|out|err)|fd/\d+|shm/.*|pts/.*)$"
)
ALL_ENTRIES = re.compile(r"[.*?]*\*[.*?]*")  # *, .*, *.* ...


def canonical(path: str, cwd: str | None = None) -> str | None:
    """``path`` with its ``.``, ``..`` and empty parts resolved as text; None when it is
    relative and ``cwd`` is not known."""
    if path == "~" or path.startswith("~/"):
        base, rest = "~", path[1:]
    elif path.startswith("/"):
        base, rest = "", path
    elif cwd is None:
        return None
    else:
        return canonical(f"{cwd}/{path}")
    parts: list[str] = []
    for part in rest.split("/"):
        if part in ("", "."):
            continue
        if part != "..":
            parts.append(part)
        elif parts:
            parts.pop()
        elif base == "~":  # the home's parent: some directory of homes
            base, parts = "", ["home"]
    if not parts:
        return base or "/"
    return base + "/" + "/".join(parts)


def describe_protected(path: str | None) -> str | None:
    """How to name ``path`` in a refusal when it is /, the home, a system directory or all
    the entries of one of them; None for any other path."""
    if path is None:
        return None
    head, _, last = path.rpartition("/")
    if path not in ("/", "~") and ALL_ENTRIES.fullmatch(last):
        inner = describe_protected(head or "/")
        return f"everything in {inner}" if inner else None
    if path == "/":
        return "the root directory /"
    if path == "~":
        return "the home directory"
    if path in SYSTEM_DIRS:
        return f"the system directory {path}"
    if head == "" and any(c in last for c in "*?[") and fnmatch.filter(SYSTEM_DIRS, path):
        return f"system directories ({path})"
    return None


def is_system_file(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_FILES)


def is_disk(path: str) -> bool:
    """A block device or raw memory: writing to it destroys what is on it."""
    return DISK.match(path) is not None


def is_device(path: str) -> bool:
    """Any device file except the harmless ones (/dev/null, ttys, std streams ...)."""
    return path.startswith("/dev/") and HARMLESS_DEVICES.match(path) is None
