#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check the relative links of the project's Markdown files.

Every link [text](target) whose target is not a URL must name a file or folder
of the repository, and a #fragment must be the anchor of a heading in the
target file (GitHub's rule: lower case, punctuation dropped, spaces to '-',
repeats numbered -1, -2, ...). Links inside code blocks and code spans are not
links. Standard library only.

  scripts/check-doc-links.py            README.md, docs/*.md, tests/README.md,
                                        configs/README.md, jobs/README.md
  scripts/check-doc-links.py FILE.md...

Exit 0 when every link resolves, 1 otherwise (each broken link is listed).
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT = ["README.md", "docs/*.md", "tests/README.md", "configs/README.md", "jobs/README.md"]
LINK = re.compile(r"(?<!\!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with code spans blanked."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        m = re.match(r"(`{3,}|~{3,})", stripped)
        if m:
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            if stripped.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line)


def anchors(text):
    seen, out = {}, set()
    for _, line in prose_lines(text):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        heading = re.sub(r"<[^>]+>", "", m.group(1))
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        out.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return out


def heading_text(text):
    """Headings are read from the raw lines: code spans in them count (`sedpack ls`)."""
    return "\n".join(line.replace("`", "") if line.lstrip().startswith("#") else line
                     for line in text.splitlines())


def check(path, cache):
    problems = []
    text = path.read_text(encoding="utf-8")
    for n, line in prose_lines(text):
        for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
            target = m.group(1)
            if URL.match(target):
                continue
            file_part, _, fragment = target.partition("#")
            dest = path if not file_part else (path.parent / file_part).resolve()
            if not dest.exists():
                problems.append(f"{path.relative_to(ROOT)}:{n}: {target}: no such file")
                continue
            if fragment and dest.is_file() and dest.suffix == ".md":
                if dest not in cache:
                    cache[dest] = anchors(heading_text(dest.read_text(encoding="utf-8")))
                if fragment not in cache[dest]:
                    problems.append(f"{path.relative_to(ROOT)}:{n}: {target}: no heading with anchor #{fragment}")
    return problems


def main(argv):
    patterns = argv[1:] or DEFAULT
    files = []
    for p in patterns:
        matched = sorted(ROOT.glob(p)) if any(c in p for c in "*?[") else [pathlib.Path(p)]
        files += [f if f.is_absolute() else (ROOT / f) for f in matched]
    problems, cache, links = [], {}, 0
    for f in files:
        if not f.exists():
            problems.append(f"{f}: no such file")
            continue
        f = f.resolve()
        links += sum(len(LINK.findall(line)) + len(IMAGE.findall(line)) for _, line in prose_lines(f.read_text(encoding="utf-8")))
        problems += check(f, cache)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"check-doc-links: {len(files)} files, {links} links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
