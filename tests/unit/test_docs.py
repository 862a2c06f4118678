"""The documents as a newcomer reads them: the README's set-up is what CI runs, every link
leads somewhere, and every table of results is the one its benchmark wrote."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_test_command_is_what_ci_runs(readme_setup):
    install, tests = readme_setup
    assert install == "pip install ./"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"^{re.escape(tests)}( --tier \"\$tier\")?$", ci, re.M), \
        f"README's test command {tests!r} is not the one .ci/run runs"


def test_the_readme_fits_two_screens_and_links_every_page_of_docs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 130
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    assert len(pages) >= 8
    missing = [p for p in [*pages, "bench/README.md", "CHANGELOG.md"] if f"]({p}" not in readme]
    assert not missing, f"README.md does not link {missing}"


def test_every_relative_link_leads_to_a_file():
    broken = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if not (doc.parent / path).exists():
                broken.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_tables_of_results_are_generated_from_bench_results():
    blocks = [m for d in DOCS for m in re.findall(r"<!-- generated:([a-z0-9_]+) -->", d.read_text())]
    assert {"zoo", "resnet50_latency"} <= set(blocks), blocks
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "tables.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_no_document_names_a_module_that_moved_away():
    """The package's layers are folders now (tvm_wheels/compiler, tvm_wheels_build, tools/models)."""
    gone = re.compile(r"tvm_wheels/(pipeline|rewrites|schedules|records|measure|fast_math|tuning|_metadata|wheel_variant)\.py"
                      r"|tests/models|bench/(export_zoo|build_cost)\.py")
    stale = [f"{d.relative_to(ROOT)}: {m.group(0)}" for d in DOCS if d.name != "CHANGELOG.md"
             for m in gone.finditer(d.read_text())]
    assert not stale, stale


# Run a script until its command line is parsed, then stop: argparse's parse_args parses, then exits
# 0 (a documented flag that the script does not have exits 2 with argparse's message).
PARSE_ONLY = """
import argparse, runpy, sys
parse = argparse.ArgumentParser.parse_args
def parse_only(self, args=None, namespace=None):
    parse(self, args, namespace)
    raise SystemExit(0)
argparse.ArgumentParser.parse_args = parse_only
target, sys.argv = sys.argv[1], sys.argv[1:]
if target.endswith(".py") and "parse_args(" not in open(target).read():
    sys.exit(f"{target} does not parse its command line (argparse): it would run here")
if target.endswith(".py"):
    sys.path.insert(0, target.rsplit("/", 1)[0])  # as `python script.py` does
    runpy.run_path(target, run_name="__main__")
else:
    runpy.run_module(target, run_name="__main__", alter_sys=True)
"""
def script_commands() -> list[tuple[str, list[str]]]:
    """(document: line, argv) of every documented run of a script of tools/ or bench/ and of
    the tvm-wheels command; optional parts in [brackets] are given."""
    from conftest import shell_lines

    found = []
    for doc in DOCS:
        for line in shell_lines(doc.relative_to(ROOT).as_posix()):
            words = shlex.split(line.replace("[", "").replace("]", ""))  # as the shell splits it
            if not words:
                continue
            if words[0].endswith("python") and len(words) > 1 and re.match(r"(tools|bench)/\S+\.py$", words[1]):
                argv = [str(ROOT / words[1]), *words[2:]]
            elif words[0] == "tvm-wheels":
                argv = ["tvm_wheels", *words[1:]]
            else:
                continue
            found.append((f"{doc.relative_to(ROOT)}: {line}", argv))  # placeholders (DIR, NAME) as they are
    return found


def test_every_documented_command_line_of_a_script_parses():
    commands = script_commands()
    assert len(commands) >= 10, commands
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "tools")]))
    failed = []
    for where, argv in commands:
        proc = subprocess.run([sys.executable, "-c", PARSE_ONLY, *argv], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=120)
        if proc.returncode != 0:
            failed.append(f"{where}\n  {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    assert not failed, "\n".join(failed)
