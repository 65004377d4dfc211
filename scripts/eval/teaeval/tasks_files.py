"""Tasks on files in the workspace: write, run, read, fix, find, count, rename."""

from __future__ import annotations

import random
import re

from .task import (
    Case,
    JudgeInput,
    Task,
    Verdict,
    failed,
    has_number,
    names_one_file,
    passed,
    quote,
    read_file,
    run_python,
)

WORDS = ("pineapple", "lighthouse", "marmalade", "snowdrift", "tambourine", "quicksilver")
BIRDS = ("sparrow", "kestrel", "wren", "magpie", "swallow", "robin")


def _hello_case(rng: random.Random) -> Case:
    return Case(prompts=("Create a file hello.py that prints hello world, then run it.",))


def _hello_judge(given: JudgeInput) -> Verdict:
    if not (given.workspace / "hello.py").is_file():
        return failed("hello.py was not written")
    result = run_python(given.workspace, ["hello.py"])
    said = " ".join(re.sub(r"[^a-z]+", " ", result.stdout.lower()).split())
    if result.returncode != 0 or said != "hello world":
        return failed(f"python hello.py: exit {result.returncode}, output {quote(result.stdout)}")
    return passed("python hello.py prints hello world")


def _number_case(rng: random.Random) -> Case:
    code = rng.randint(10000, 99999)
    text = (
        "Facilities notes\n\nThe lift is serviced on Tuesdays.\n"
        f"The warehouse door code is {code}.\nVisitors sign in at the front desk.\n"
    )
    return Case(
        prompts=("Read notes.txt and tell me the warehouse door code.",),
        facts={"code": code},
        files={"notes.txt": text},
    )


def _number_judge(given: JudgeInput) -> Verdict:
    code = given.facts["code"]
    if has_number(given.answer, code):
        return passed(f"the answer contains the code {code}")
    return failed(f"the answer lacks the code {code}: {quote(given.answer)}")


BUGGY_MEDIAN = """def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return ordered[middle] + ordered[middle - 1] / 2
"""
MEDIAN_TEST = """from stats import median

assert median([3, 1, 2]) == 2
assert median([4, 1, 3, 2]) == 2.5, median([4, 1, 3, 2])
assert median([10, 20]) == 15, median([10, 20])
print("all tests passed")
"""


def _bug_case(rng: random.Random) -> Case:
    prompt = (
        "`python test_stats.py` fails. Fix the bug in stats.py so that the test passes. "
        "Do not change test_stats.py."
    )
    return Case(prompts=(prompt,), files={"stats.py": BUGGY_MEDIAN, "test_stats.py": MEDIAN_TEST})


def _bug_judge(given: JudgeInput) -> Verdict:
    if read_file(given.workspace / "test_stats.py") != MEDIAN_TEST:
        return failed("test_stats.py was changed")
    result = run_python(given.workspace, ["test_stats.py"])
    if result.returncode != 0:
        return failed(f"python test_stats.py still fails: {quote(result.stderr[-300:])}")
    return passed("python test_stats.py passes")


def _find_case(rng: random.Random) -> Case:
    paths = ["notes/old/birds.txt", "misc/journal_07.txt", "archive/2021/field.md"]
    paths += ["docs/readme.md", "notes/todo.txt", "misc/recipes.txt"]
    target = rng.choice(paths)
    birds = list(BIRDS)
    rng.shuffle(birds)
    files = {path: f"Saw a {birds[i % len(birds)]} today.\n" for i, path in enumerate(paths)}
    files[target] = "Early walk by the river: a blue heron stood in the reeds.\n"
    prompt = "One file somewhere under this folder mentions a blue heron. Which file is it?"
    return Case(prompts=(prompt,), facts={"target": target, "paths": paths}, files=files)


def _find_judge(given: JudgeInput) -> Verdict:
    target = given.facts["target"].rsplit("/", 1)[-1]
    others = [p.rsplit("/", 1)[-1] for p in given.facts["paths"] if p != given.facts["target"]]
    return names_one_file(given.answer, target, others)


def _count_case(rng: random.Random) -> Case:
    count = rng.randint(41, 97)
    vocabulary = WORDS + BIRDS
    # words only: a number in the file could turn up in the answer by chance
    lines = [" ".join(rng.choices(vocabulary, k=rng.randint(2, 6))) for _ in range(count)]
    return Case(
        prompts=("How many lines does data.txt have?",),
        facts={"lines": count},
        files={"data.txt": "\n".join(lines) + "\n"},
    )


def _count_judge(given: JudgeInput) -> Verdict:
    count = given.facts["lines"]
    if has_number(given.answer, count):
        return passed(f"the answer contains {count}")
    return failed(f"the answer lacks the line count {count}: {quote(given.answer)}")


def _word_case(rng: random.Random) -> Case:
    word = rng.choice(WORDS)
    prompt = f"Write the single word {word} into a file named word.txt."
    return Case(prompts=(prompt,), facts={"word": word})


def _word_judge(given: JudgeInput) -> Verdict:
    text = read_file(given.workspace / "word.txt")
    if text is None:
        return failed("word.txt was not written")
    if text.strip().lower() != given.facts["word"]:
        return failed(f"word.txt holds {quote(text)}, not {given.facts['word']!r}")
    return passed(f"word.txt holds {given.facts['word']}")


GEOMETRY = "def area_sq(side):\n    return side * side\n"
REPORT = 'from geometry import area_sq\n\n\ndef report(side):\n    return f"area={area_sq(side)}"\n'
RENAME_CHECK = (
    "import geometry, report\n"
    "assert not hasattr(geometry, 'area_sq'), 'area_sq is still defined'\n"
    "assert geometry.square_area(3) == 9\n"
    "assert report.report(4) == 'area=16', report.report(4)\n"
)


def _rename_case(rng: random.Random) -> Case:
    prompt = (
        "Rename the function area_sq to square_area everywhere it is used "
        "(geometry.py and report.py)."
    )
    return Case(prompts=(prompt,), files={"geometry.py": GEOMETRY, "report.py": REPORT})


def _rename_judge(given: JudgeInput) -> Verdict:
    for name in ("geometry.py", "report.py"):
        text = read_file(given.workspace / name)
        if text is None:
            return failed(f"{name} is gone")
        if "area_sq" in text:
            return failed(f"{name} still mentions area_sq")
    result = run_python(given.workspace, ["-c", RENAME_CHECK])
    if result.returncode != 0:
        return failed(f"importing the renamed modules fails: {quote(result.stderr[-300:])}")
    return passed("both files use square_area and still work")


def _todo_case(rng: random.Random) -> Case:
    names = ["parser.py", "loader.py", "cache.py", "export.py", "cli.py"]
    target = rng.choice(names)
    files = {f"src/{n}": f"def {n[:-3]}_main():\n    return {i}\n" for i, n in enumerate(names)}
    files[f"src/{target}"] = (
        f"def {target[:-3]}_main(items):\n    # TODO: handle empty input\n    return items[0]\n"
    )
    prompt = "Search the code under src/ for a TODO comment and tell me which file it is in."
    return Case(prompts=(prompt,), facts={"target": target, "names": names}, files=files)


def _todo_judge(given: JudgeInput) -> Verdict:
    target = given.facts["target"]
    return names_one_file(given.answer, target, [n for n in given.facts["names"] if n != target])


COMPUTE = """limit = {limit}
primes = [n for n in range(2, limit) if all(n % d for d in range(2, int(n ** 0.5) + 1))]
print(sum(p * p for p in primes))
"""


def _script_case(rng: random.Random) -> Case:
    limit = rng.randint(200, 400)
    primes = [n for n in range(2, limit) if all(n % d for d in range(2, int(n**0.5) + 1))]
    return Case(
        prompts=("Run compute.py and tell me the number it prints.",),
        facts={"total": sum(p * p for p in primes)},
        files={"compute.py": COMPUTE.format(limit=limit)},
    )


def _script_judge(given: JudgeInput) -> Verdict:
    total = given.facts["total"]
    if has_number(given.answer, total):
        return passed(f"the answer contains {total}")
    return failed(f"the answer lacks the printed number {total}: {quote(given.answer)}")


TASKS = (
    Task("hello_py", "write hello.py and run it", _hello_case, _hello_judge),
    Task("read_number", "read a code from notes.txt", _number_case, _number_judge),
    Task("fix_bug", "fix stats.py until its test passes", _bug_case, _bug_judge),
    Task("find_file", "find the file that mentions a heron", _find_case, _find_judge),
    Task("count_lines", "count the lines of data.txt", _count_case, _count_judge),
    Task("write_word", "write one word to word.txt", _word_case, _word_judge),
    Task("rename_function", "rename a function used in two files", _rename_case, _rename_judge),
    Task("find_todo", "grep src/ for a TODO and name the file", _todo_case, _todo_judge),
    Task("run_script", "run compute.py and report its output", _script_case, _script_judge),
)
