#!/usr/bin/env python3
"""Refuses #includes that go against the module table of cmake/layers.cmake.

Reads the table as CMake wrote it (build/layers.json) and every source and header of every module
under ROOT. A file of module M may include:
  - files of M itself;
  - files of the modules below M (those M names in PUBLIC or PRIVATE, and theirs in turn);
  - from a public header (include/zerograph/...), only files of M and of the modules reachable
    through PUBLIC links, and never an internal header (src/...): what a public header includes,
    every user of M compiles;
  - another module's internal header (src/...) only when that module shares its internals
    (SHARED_INTERNALS: core's utilities, the runtime's kernel helpers for the CUDA backend);
    otherwise what other modules need belongs in include/zerograph/<module>/;
  - the exact #include that a layering exception of the table names, in the file it names.
Includes are resolved as the build does: "zerograph/..." under include/, other quoted names under
src/ (the library's internal include root) or next to the including file; names that resolve to
no file of ours are third-party and not checked.

Prints one line per forbidden include (file:line: the edge) and exits 1; 0 when all are allowed;
2 when the table or the tree is unusable. An exception whose include is gone is an error too, so
that the table shrinks when a back-edge is fixed.

Usage: check_layering.py --table LAYERS_JSON --root SOURCE_ROOT
"""

import argparse
import json
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def load_table(path):
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    modules = {m["name"]: m for m in table["modules"]}
    for m in table["modules"]:
        for dep in m["public"] + m["private"]:
            if dep not in modules:
                raise ValueError(f"module {m['name']} uses unknown module {dep}")
    return table, modules


def below(modules, name, public_only):
    """The modules `name` may include: reachable through its links (PUBLIC ones only if asked)."""
    seen = set()
    stack = [name]
    while stack:
        m = modules[stack.pop()]
        deps = m["public"] if public_only else m["public"] + m["private"]
        for dep in deps:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def owner(paths, rel):
    """The module whose longest path holds `rel` (a path relative to the root), or None."""
    best, best_len = None, -1
    for path, name in paths:
        if (rel == path or rel.startswith(path + "/")) and len(path) > best_len:
            best, best_len = name, len(path)
    return best


def resolve(root, rel_file, bracket, name):
    """The root-relative path an #include names, or None for a third-party header."""
    if name.startswith("zerograph/"):
        return "include/" + name
    if bracket == "<":
        return None
    for candidate in ("src/" + name, os.path.join(os.path.dirname(rel_file), name)):
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def module_files(root, paths):
    """Every source and header under the modules' paths, root-relative and sorted."""
    found = set()
    for path, _ in paths:
        full = os.path.join(root, path)
        if os.path.isfile(full):
            found.add(path)
            continue
        for dirpath, _, filenames in os.walk(full):
            for filename in filenames:
                if filename.endswith(SOURCE_SUFFIXES):
                    found.add(os.path.relpath(os.path.join(dirpath, filename), root))
    return sorted(found)


def unowned_files(root, paths):
    """Files under src/ and include/zerograph/ that no module holds (a new folder to declare)."""
    unowned = []
    for top in ("src", "include/zerograph"):
        for dirpath, _, filenames in os.walk(os.path.join(root, top)):
            for filename in filenames:
                rel = os.path.relpath(os.path.join(dirpath, filename), root)
                if filename.endswith(SOURCE_SUFFIXES) and owner(paths, rel) is None:
                    unowned.append(rel)
    return sorted(unowned)


def check(table, modules, root):
    paths = [(p.rstrip("/"), m["name"]) for m in table["modules"] for p in m["paths"]]
    exceptions = {(e["file"], e["include"]): e for e in table["exceptions"]}
    used_exceptions = set()
    errors = []

    for rel in unowned_files(root, paths):
        errors.append(f"{rel}: belongs to no module (add its folder to cmake/layers.cmake)")

    for rel in module_files(root, paths):
        module = owner(paths, rel)
        public_header = rel.startswith("include/")
        allowed = below(modules, module, public_only=public_header)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, start=1):
            match = INCLUDE_RE.match(line)
            if not match:
                continue
            name = match.group(2)
            target = resolve(root, rel, match.group(1), name)
            if target is None:
                continue
            if (rel, name) in exceptions:
                used_exceptions.add((rel, name))
                continue
            used = owner(paths, target)
            where = f"{rel}:{number}"
            if used is None:
                errors.append(f"{where}: {module} includes {name}, which belongs to no module")
            elif public_header and target.startswith("src/"):
                errors.append(f"{where}: public header of {module} includes internal header "
                              f"{name} (of {used}); its users cannot see src/")
            elif used == module:
                continue
            elif used not in allowed:
                if public_header and used in below(modules, module, public_only=False):
                    errors.append(f"{where}: public header of {module} includes {name}, but "
                                  f"{used} is a PRIVATE dependency of {module} (make it PUBLIC in "
                                  f"cmake/layers.cmake, or include it from a source file)")
                else:
                    may = ", ".join(sorted(allowed)) or "nothing"
                    errors.append(f"{where}: forbidden edge {module} -> {used}: {module} "
                                  f"includes {name}, but {used} is not below {module} "
                                  f"({module} may use: {may})")
            elif target.startswith("src/") and not modules[used].get("shared_internals"):
                errors.append(f"{where}: {module} includes {name}, an internal header of {used} "
                              f"(move it to include/zerograph/{used}/ if it is {used}'s "
                              f"interface for other modules)")

    for key, e in sorted(exceptions.items()):
        if key not in used_exceptions:
            errors.append(f"{e['file']}: the layering exception {e['module']} -> {e['uses']} "
                          f"(#include \"{e['include']}\") is no longer used: remove it from "
                          f"cmake/layers.cmake")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="layers.json, written by CMake")
    parser.add_argument("--root", required=True, help="the source tree to check")
    args = parser.parse_args()
    try:
        table, modules = load_table(args.table)
    except (OSError, ValueError, KeyError) as e:
        print(f"check_layering: cannot read the table {args.table}: {e}", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(args.root, "src")):
        print(f"check_layering: {args.root} has no src/ folder", file=sys.stderr)
        return 2
    errors = check(table, modules, args.root)
    for error in errors:
        print(error)
    if errors:
        print(f"check_layering: {len(errors)} include(s) against the table in "
              f"{table.get('source', 'the table')}", file=sys.stderr)
        return 1
    print(f"check_layering: ok ({len(table['modules'])} modules, "
          f"{len(table['exceptions'])} exception(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
