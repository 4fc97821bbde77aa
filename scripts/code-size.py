#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check the size limits of the project's C++ sources: no file over 800 lines,
no function over 120 (docs/development.md, "Sizes"). The test command runs it
(ctest test code_size_check).

Covers *.h, *.hpp, *.cc, *.cpp, *.cxx under the given folders, by default the
library, its public headers, the command-line tool and the Python module:
src include python (relative to the repository root; src/cli is the tool).
Test, benchmark, example and fuzz sources (tests bench examples fuzz) are not
covered by default; name them to scan them too. Prints each offender as

  <path>:1: file has <lines> lines (limit 800)
  <path>:<first line>: function <name> has <lines> lines (limit 120)

longest first, then a summary (files scanned, the longest file and function).
Exit status 1 if anything is over a limit, 0 otherwise (--list: always 0).

How functions are found (a heuristic, not a C++ parser):
  * comments, string and character literals (raw strings too) and preprocessor
    lines are blanked first, so braces inside them do not count;
  * a '{' opens a function body when it is met outside any function, its
    header (the text since the previous ';', '{' or '}') has a '(' and is not
    a namespace, class, struct, union, enum or extern "C" block, and is not an
    initialiser ('= {' , a lambda assigned at namespace scope);
  * braces of a constructor's member initialisers (`: a_{x}`) are skipped;
  * a function runs from the first line of its header (template line
    included) to its closing '}', both counted; lambdas and local classes
    count towards the function that holds them;
  * macros that expand to a function (TEST(...), PYBIND11_MODULE(...)) count
    as functions named after the macro;
  * code that hides braces in macros, or functions defined inside a macro's
    arguments, can be misread; the name shown is the identifier before the
    header's first '(' (qualified names keep their scope).
"""

import argparse
import os
import re
import sys

EXTENSIONS = (".h", ".hpp", ".cc", ".cpp", ".cxx")
SCOPE_WORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*\"C\"")
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "volatile", "try"}
IDENT = re.compile(r"[A-Za-z_]\w*$")


def blank(text):
    """Return `text` with comments, literals and preprocessor lines replaced by
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" :
            # Preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + "".join(ch if ch == "\n" else " " for ch in text[i + 2:end]))
            i = end
            continue
        if c == '"' or (c == "'" and not _digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _digit_separator(text, i):
    """True if the quote at `i` separates digits (1'000'000)."""
    j = i - 1
    while j >= 0 and (text[j].isalnum() or text[j] in "'."):
        j -= 1
    token = text[j + 1:i]
    return bool(token) and token[0].isdigit()


def function_name(header):
    paren = header.find("(")
    before = header[:paren].rstrip()
    m = re.search(r"((?:[A-Za-z_~]\w*\s*::\s*)*(?:operator\s*[^\w\s(]+|operator\s+\w+|~?[A-Za-z_]\w*))$",
                  before)
    name = m.group(1) if m else before.split()[-1] if before.split() else "?"
    return re.sub(r"\s+", "", name)


def has_ctor_initialiser(header):
    """True if `header` is `...) : member(...)` style, i.e. there is a single ':'
    after the parameter list's ')'."""
    close = header.rfind(")")
    if close < 0:
        return False
    depth, k = 0, 0
    # Find the ')' that ends the parameter list: the first one at depth 0.
    for k, ch in enumerate(header):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
    tail = header[k + 1:]
    return re.search(r"(?<!:):(?!:)", tail) is not None


def functions(text):
    """Yield (first line, last line, name) of each function definition."""
    code = blank(text)
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    stack = []  # "scope", "func", "other"
    header_start = 0
    func = None  # (start offset, name, depth)
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch in ";}" and not any(s != "scope" for s in stack):
            if ch == "}" and stack:
                stack.pop()
            header_start = i + 1
            i += 1
            continue
        if ch == "{":
            in_func = any(s != "scope" for s in stack)
            if in_func:
                stack.append("other")
                i += 1
                continue
            header = code[header_start:i]
            stripped = header.strip()
            if _is_scope(stripped):
                stack.append("scope")
                header_start = i + 1
            elif "(" in stripped and not re.search(r"=\s*(\[|\{|$)", stripped) and \
                    not stripped.endswith("="):
                last = stripped.split()[-1] if stripped.split() else ""
                if has_ctor_initialiser(stripped) and IDENT.search(last) and last not in QUALIFIERS:
                    # A member initialiser's braces: `: a_{x}`; skip them.
                    i = _skip_braces(code, i)
                    continue
                offset = header_start + (len(header) - len(header.lstrip()))
                stack.append("func")
                func = (offset, function_label(function_name(stripped), stripped))
            else:
                stack.append("other")
            i += 1
            continue
        if ch == "}":
            if stack:
                kind = stack.pop()
                if kind == "func" and func is not None:
                    yield line_of[func[0]], line_of[i], func[1]
                    func = None
            if not any(s != "scope" for s in stack):
                header_start = i + 1
            i += 1
            continue
        i += 1


def _is_scope(header):
    """True for a namespace, class, struct, union, enum or extern "C" block
    (a template parameter list `template <class T>` does not count)."""
    body = _drop_templates(header)
    m = SCOPE_WORDS.search(body)
    return m is not None and "(" not in body[:m.start()]


def _drop_templates(header):
    out, i, n = [], 0, len(header)
    while i < n:
        m = re.match(r"template\s*<", header[i:])
        if m and (i == 0 or not (header[i - 1].isalnum() or header[i - 1] == "_")):
            depth, j = 0, i + m.end() - 1
            while j < n:
                if header[j] == "<":
                    depth += 1
                elif header[j] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        out.append(header[i])
        i += 1
    return "".join(out)


def _skip_braces(code, i):
    depth = 0
    n = len(code)
    while i < n:
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def function_label(name, header):
    """`name`, or for a macro-made function (TEST_F(Suite, Case)) the macro with
    its arguments."""
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        m = re.search(re.escape(name) + r"\s*\(([^()]*)\)", header)
        if m:
            return f"{name}({' '.join(m.group(1).split())})"
    return name


def scan(root, dirs):
    """Paths (sorted) of the C++ sources under `dirs` of `root`."""
    paths = []
    for d in dirs:
        base = os.path.join(root, d)
        if os.path.isfile(base):
            paths.append(base)
            continue
        if not os.path.isdir(base):
            raise SystemExit(f"code-size: no such folder: {base}")
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    paths.append(os.path.join(dirpath, f))
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", default=["src", "include", "python"],
                        help="folders (or files) to scan, relative to --root (default: src include python)")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                        help="repository root the folders are relative to (default: this script's ..)")
    parser.add_argument("--max-file-lines", type=int, default=800, help="file limit (default 800)")
    parser.add_argument("--max-function-lines", type=int, default=120, help="function limit (default 120)")
    parser.add_argument("--list", action="store_true", help="only list what is over; exit 0")
    parser.add_argument("--fail", action="store_true", help=argparse.SUPPRESS)  # the default now
    args = parser.parse_args(argv)

    root = os.path.normpath(args.root)
    paths = scan(root, args.dirs)
    long_files, long_funcs = [], []
    longest_file, longest_func = (0, "-"), (0, "-", "-")
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        rel = os.path.relpath(path, root)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        longest_file = max(longest_file, (lines, rel), key=lambda t: t[0])
        if lines > args.max_file_lines:
            long_files.append((lines, rel))
        for first, last, name in functions(text):
            length = last - first + 1
            entry = (length, f"{rel}:{first}", name)
            longest_func = max(longest_func, entry, key=lambda t: t[0])
            if length > args.max_function_lines:
                long_funcs.append(entry)

    for lines, rel in sorted(long_files, key=lambda t: (-t[0], t[1])):
        print(f"{rel}:1: file has {lines} lines (limit {args.max_file_lines})")
    for length, where, name in sorted(long_funcs, key=lambda t: (-t[0], t[1])):
        print(f"{where}: function {name} has {length} lines (limit {args.max_function_lines})")
    print(f"code-size: {len(paths)} files scanned; {len(long_files)} over {args.max_file_lines} lines, "
          f"{len(long_funcs)} functions over {args.max_function_lines} lines; longest file "
          f"{longest_file[1]} ({longest_file[0]}), longest function {longest_func[2]} at "
          f"{longest_func[1]} ({longest_func[0]})")
    return 1 if (long_files or long_funcs) and not args.list else 0


if __name__ == "__main__":
    sys.exit(main())
