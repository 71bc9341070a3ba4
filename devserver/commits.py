"""`make check`: commit subjects read `area: what changed`, at most 72 characters.

Checks the commits since SINCE (the last commit before the rule was written down; older
subjects ran to 753 characters and stay as they are). Merge commits are passed over. Outside a
git checkout, or in a shallow clone that lacks SINCE, there is nothing to check.

    python -m devserver.commits
"""

from __future__ import annotations

import re
import subprocess
import sys

from devserver.processes import ROOT

SINCE = "b2f3cd4"
MAX_SUBJECT = 72
SUBJECT = re.compile(r"^[a-z0-9_./-]+(, ?[a-z0-9_./-]+)*: \S")


def subjects(since: str = SINCE) -> list[tuple[str, str]] | None:
    """(hash, subject) of every non-merge commit after `since`; None when git cannot say."""
    try:
        out = subprocess.run(
            ["git", "log", "--no-merges", "--format=%h %s", f"{since}..HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [
        (sha, subject)
        for sha, _, subject in (line.partition(" ") for line in out.split("\n") if line)
    ]


def problems(commits: list[tuple[str, str]]) -> list[str]:
    found = []
    for sha, subject in commits:
        if len(subject) > MAX_SUBJECT:
            found.append(f"{sha}: subject is {len(subject)} characters (at most {MAX_SUBJECT})")
        if not SUBJECT.match(subject):
            found.append(f"{sha}: subject does not read `area: what changed`: {subject!r}")
    return found


def main() -> int:
    commits = subjects()
    if commits is None:
        print(f"commits: no history since {SINCE} here; nothing to check")
        return 0
    found = problems(commits)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        return 1
    print(f"commits: {len(commits)} subjects read `area: what changed` in ≤ {MAX_SUBJECT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
