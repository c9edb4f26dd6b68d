#!/usr/bin/env python3
"""Lists every function body over 100 lines in the project's C++ sources.

Usage: tools/check_function_length.py [REPO_ROOT] [--allow FILE] [--limit N]   (run by ctest as `function_length`)
Scans runtime/, actors/, backends/, storage/, knowledge/ (not knowledge/templates/) and tools/ for
.cpp/.hpp/.h/.cc/.cu/.cuh files; tests/, problems/ and build/ are not scanned.
A function's length is the lines from its body's opening brace to its closing brace, both included; lambdas
and local classes count towards the function that holds them. Braces inside comments, string and character
literals (raw strings included) and preprocessor lines are not counted.
Exceptions only through the allow-list (default tools/function_length_allow.txt), one per line:
  path:function  reason
(`function` as printed here, e.g. Loader::load). An entry that names no function over the limit any more
is reported as stale, so the list only holds what is still needed.
Exit 0 when every long function is allowed and no entry is stale; 1 otherwise, one line per finding.
"""
import os
import re
import sys

ROOTS = ("runtime", "actors", "backends", "storage", "knowledge", "tools")
SKIP = ("knowledge/templates/",)
EXTS = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh")
RAW_PREFIXES = ("R", "u8R", "uR", "UR", "LR")
PUNCT3 = ("<<=", ">>=", "->*", "...", "<=>")
PUNCT2 = ("::", "->", "==", "!=", "<=", ">=", "&&", "||", "<<", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
          "|=", "^=", ".*")
NOT_NAMES = {"decltype", "alignas", "__attribute__", "noexcept", "requires", "sizeof", "alignof", "__declspec",
             "static_assert"}


def tokens(text):
    """(token, line) for every token of `text` outside comments, literals and preprocessor lines.
    A string or character literal is one token '""'; '>>' is two '>' (it may close two templates)."""
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "#" and at_line_start:  # preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                elif text.startswith("/*", i):
                    end = text.find("*/", i + 2)
                    end = n if end < 0 else end + 2
                    line += text.count("\n", i, end)
                    i = end
                    continue
                elif text.startswith("//", i):
                    while i < n and text[i] != "\n":
                        i += 1
                    break
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if j < n and text[j] == '"' and word in RAW_PREFIXES:  # R"delim( ... )delim"
                k = text.find("(", j + 1)
                delim = text[j + 1:k]
                end = text.find(")" + delim + '"', k + 1)
                end = n if end < 0 else end + len(delim) + 2
                yield '""', line
                line += text.count("\n", i, end)
                i = end
                continue
            if j < n and text[j] in "\"'" and word in ("u8", "u", "U", "L"):  # prefixed literal
                i = j
                continue
            yield word, line
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):  # pp-number, digit separators too
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_.'" or
                             (text[j] in "+-" and text[j - 1] in "eEpP")):
                j += 1
            yield text[i:j], line
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            yield '""', line
            i = j + 1
            continue
        for p in PUNCT3 + PUNCT2:
            if text.startswith(p, i):
                yield p, line
                i += len(p)
                break
        else:
            yield c, line
            i += 1


def skip_group(toks, i, open_, close):
    """Index just past the group that opens at toks[i] (toks[i][0] == open_)."""
    depth = 0
    while i < len(toks):
        t = toks[i][0]
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def top_level(decl):
    """The declaration's words with each (...) and [...] group replaced by one word '()' or '[]'."""
    out, depth = [], 0
    for t, _ in decl:
        if t in "([":
            if depth == 0:
                out.append("()" if t == "(" else "[]")
            depth += 1
        elif t in ")]":
            depth -= 1
        elif depth == 0:
            out.append(t)
    return out


IDENT = re.compile(r"^[A-Za-z_]\w*$")


def qualified(words, k):
    """The name ending at words[k] with its qualifiers (A::B::name, ~Class)."""
    start = k
    if start >= 1 and words[start - 1] == "~":
        start -= 1
    while start >= 2 and words[start - 1] == "::" and IDENT.match(words[start - 2]):
        start -= 2
    return "".join(words[start:k + 1])


def function_name(top):
    """The function's name from its declaration's top-level words, or None when the declaration has no
    parameter list (not a function). Words before the name (macros, attributes) are passed over."""
    if "operator" in top:
        k = top.index("operator")
        j = k + 1
        if j < len(top) and top[j] == "()":  # operator()
            j += 1
        while j < len(top) and top[j] != "()":
            j += 1
        return qualified(top, k - 1) + "::operator" + "".join(top[k + 1:j]).replace("()", "()", 1) \
            if k >= 2 and top[k - 1] == "::" else "operator" + "".join(top[k + 1:j])
    for k in range(len(top) - 1, 0, -1):
        if top[k] == "()" and IDENT.match(top[k - 1]) and top[k - 1] not in NOT_NAMES:
            return qualified(top, k - 1)
    return None


def has_assignment(top):
    """True when the declaration has an '=' outside parentheses (an initializer, not a default argument)."""
    return any(w == "=" and (k == 0 or top[k - 1] != "operator") for k, w in enumerate(top))


def scope_kind(top):
    """'namespace', 'class' (with its name) or None for a declaration that opens a brace."""
    if "namespace" in top:
        k = len(top) - 1 - top[::-1].index("namespace")
        if all(IDENT.match(w) or w == "::" for w in top[k + 1:]):
            return "namespace", ""
    if top[-2:] == ["extern", '""']:
        return "namespace", ""
    kinds = [k for k, w in enumerate(top) if w in ("class", "struct", "union", "enum")]
    if kinds and "()" not in top[kinds[-1]:] and "=" not in top[kinds[-1]:]:
        k = kinds[-1] + 1
        while k < len(top) and top[k] in ("class", "struct", "final", "alignas", "[]"):
            k += 1
        return "class", qualified(top, k) if k < len(top) and IDENT.match(top[k]) else ""
    return None


def functions(text):
    """(name, first line, lines) of every function body in `text` (C++ source)."""
    toks = list(tokens(text))
    found = []
    scopes = []  # names of the enclosing classes ('' for a namespace, an extern block or an unnamed class)
    decl = []
    i = 0
    while i < len(toks):
        t, line = toks[i]
        if t in (";", "}"):
            if t == "}" and scopes:
                scopes.pop()
            decl = []
            i += 1
        elif t in "([":
            j = skip_group(toks, i, t, ")" if t == "(" else "]")
            decl.extend(toks[i:j])
            i = j
        elif t == ":" and decl and decl[-1][0] == ")" and function_name(top_level(decl)):
            i += 1  # a constructor's initializers: member(value) or member{value}, up to the body
            while i < len(toks) and not (toks[i][0] == "{" and toks[i - 1][0] in (")", "}")):
                i = skip_group(toks, i, toks[i][0], "}" if toks[i][0] == "{" else ")") \
                    if toks[i][0] in "{(" else i + 1
        elif t == "{":
            top = top_level(decl)
            kind = scope_kind(top)
            name = None if kind or has_assignment(top) else function_name(top)
            if kind:
                scopes.append(kind[1])
                decl = []
                i += 1
            elif name:
                cls = [s for s in scopes if s]
                if "::" not in name and cls:
                    name = "::".join(cls) + "::" + name
                j = skip_group(toks, i, "{", "}")
                found.append((name, line, toks[j - 1][1] - line + 1))
                decl = []
                i = j
            else:  # an initializer or a braced value: not a body
                j = skip_group(toks, i, "{", "}")
                decl.extend(toks[i:j])
                i = j
        else:
            decl.append((t, line))
            i += 1
    return found


def sources(root):
    """Project C++ sources under `root`, as paths relative to it."""
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                if f.endswith(EXTS) and not any(rel.startswith(s) for s in SKIP):
                    yield rel


def read_allow(path):
    """{(path, function): reason} from the allow-list file (missing file: empty)."""
    allow = {}
    if not os.path.exists(path):
        return allow
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition(" ")
            src, _, fn = key.partition(":")
            if not fn or not reason.strip():
                print("%s:%d: expected 'path:function  reason'" % (path, n))
                allow[("", "")] = ""
                continue
            allow[(src, fn)] = reason.strip()
    return allow


def main(argv):
    args = list(argv[1:])
    limit = 100
    allow_path = None
    if "--limit" in args:
        k = args.index("--limit")
        limit = int(args[k + 1])
        del args[k:k + 2]
    if "--allow" in args:
        k = args.index("--allow")
        allow_path = args[k + 1]
        del args[k:k + 2]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    allow = read_allow(allow_path or os.path.join(root, "tools", "function_length_allow.txt"))
    bad = 1 if ("", "") in allow else 0
    used = set()
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, line, length in functions(text):
            if length <= limit:
                continue
            if (rel, name) in allow:
                used.add((rel, name))
                continue
            print("%s:%d: %s is %d lines (over %d; split it, or list it in the allow-list with the reason)"
                  % (rel, line, name, length, limit))
            bad += 1
    for key in sorted(set(allow) - used - {("", "")}):
        print("%s:%s: stale allow-list entry (no function of that name over %d lines)" % (key[0], key[1], limit))
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
