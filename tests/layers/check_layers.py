#!/usr/bin/python3
"""The layers of framework/ (docs/architecture.md, "Layers"), checked over the #include lines.

Every folder of framework/include/liembs and framework/src belongs to one layer:
  core         Lie groups, models, kernels, plugin interfaces, integrator numerics:
               Eigen and Boost only (CMake target liembs-core);
  application  configuration, loaders, runs, studies, batch I/O, MPI, the viewer (target liembs).
The core names ConfigTable (a plugin's TOML table) by declaration only: the application defines it.
The check fails
  - on any cycle between folders (a folder that includes one that includes it back, directly
    or through others), naming the folders and one include line per edge;
  - on a core file (header or source) that includes an application folder or an
    application-only dependency (toml++, urdfdom, nlohmann-json, MuJoCo, libsdformat, tinyxml2,
    GiNaC, MPI);
  - on a folder that is in neither layer (a new folder must be placed in one);
  - with a built core library given, on a shared library it needs (ELF NEEDED, read with
    readelf) beyond Eigen's and Boost's world: the C++ runtime and libc only.
  - with --architecture PAGE, on a row of PAGE's folder table (docs/architecture.md, "Layers")
    whose layer or "includes" column differs from the measured graph, or a folder without a row.
Usage: check_layers.py FRAMEWORK_DIR [LIBLIEMBS_CORE.so] [--architecture PAGE]
       check_layers.py --self-test
"""
import os
import re
import subprocess
import sys
import tempfile

CORE = {".", "lie", "model", "dynamics", "plugin", "sim", "util"}
APPLICATION = {"config", "io", "loaders", "host", "batch", "study", "view"}
APPLICATION_DEPENDENCIES = ("toml++/", "toml.hpp", "urdf", "nlohmann/", "ginac/", "mpi.h", "sdf/", "mujoco/", "tinyxml2.h")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def folder_of(relative):
    """The folder of a path relative to include/liembs or src ('.' for files at the top)."""
    parts = relative.split("/")
    return parts[0] if len(parts) > 1 else "."


def scan(framework):
    """Yields (folder, file, line number, included folder or None, included text)."""
    roots = [os.path.join(framework, "include", "liembs"), os.path.join(framework, "src")]
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(directory, name)
                folder = folder_of(os.path.relpath(path, root))
                yield folder, path, 0, None, None
                with open(path, encoding="utf-8") as text:
                    for number, line in enumerate(text, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = match.group(2)
                        included = None
                        if target.startswith("liembs/"):
                            rest = target[len("liembs/"):]
                            included = folder_of(rest)
                            if rest == "version.hpp":  # generated into the build tree
                                included = "."
                        yield folder, path, number, included, target


# What liembs-core may link: the C and C++ runtime (Boost is used header-only there).
CORE_LIBRARIES = re.compile(r"^(libstdc\+\+|libm|libgcc_s|libc|ld-linux[-\w]*|libasan|libubsan|liblsan|libclang_rt[-.\w]*)\.so")


def check_needed(library):
    """The shared libraries `library` needs beyond the runtime (each a problem)."""
    output = subprocess.run(["readelf", "-d", library], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", output)
    if not needed:
        return [f"{library}: readelf lists no NEEDED entry (not a shared library?)"]
    return [f"{library} needs {name}: liembs-core links the C++ runtime only (Eigen and Boost are header-only)"
            for name in needed if not CORE_LIBRARIES.match(name)]


DOC_ROW = re.compile(r"^\| (core|application) \| `([\w.]+)/` \|.*\| ([^|]+) \|$", re.M)


def folder_graph(framework):
    """Included folders per folder (itself and '.' left out), and every folder."""
    edges, folders = {}, set()
    for folder, _, _, included, _ in scan(framework):
        folders.add(folder)
        if included and included not in (folder, "."):
            edges.setdefault(folder, set()).add(included)
    return edges, folders


def check_architecture(framework, page):
    """The folder table of `page` against the measured include graph and the layers."""
    edges, folders = folder_graph(framework)
    problems, rows = [], {}
    with open(page, encoding="utf-8") as text:
        for layer, folder, includes in DOC_ROW.findall(text.read()):
            rows[folder] = layer
            listed = {name.strip() for name in includes.split(",")} - {"—", ""}
            if listed != edges.get(folder, set()):
                problems.append(f"{page}: folder '{folder}' lists includes {sorted(listed)}, the code has "
                                f"{sorted(edges.get(folder, set()))}")
            if (layer == "core") != (folder in CORE):
                problems.append(f"{page}: folder '{folder}' is in layer '{layer}' there, not in check_layers.py")
    for folder in sorted(folders - {"."} - set(rows)):
        problems.append(f"{page}: folder '{folder}' has no row in the folder table")
    return problems


def find_cycle(edges):
    """One cycle of the folder graph as a list of folders, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(edges.get(node, {})):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                found = visit(successor)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def check(framework):
    problems = []
    edges = {}  # folder -> {included folder: "file:line"}
    folders = set()
    for folder, path, number, included, target in scan(framework):
        folders.add(folder)
        if target is None:
            continue
        where = f"{os.path.relpath(path, framework)}:{number}"
        if included is not None and included != folder:
            edges.setdefault(folder, {}).setdefault(included, f"{where} includes <{target}>")
        if folder in CORE:
            if included in APPLICATION:
                problems.append(f"{where}: core folder '{folder}' includes <{target}> of the application layer")
            if included is None and any(dependency in target for dependency in APPLICATION_DEPENDENCIES):
                problems.append(f"{where}: core folder '{folder}' includes <{target}>, an application-only dependency")
    for folder in sorted(folders):
        if folder not in CORE and folder not in APPLICATION:
            problems.append(f"folder '{folder}' is in neither layer: add it to CORE or APPLICATION in "
                            f"tests/layers/check_layers.py and to docs/architecture.md")
    cycle = find_cycle(edges)
    if cycle:
        lines = [f"  {a} -> {b}: {edges[a][b]}" for a, b in zip(cycle, cycle[1:])]
        problems.append("cycle between folders " + " -> ".join(cycle) + ":\n" + "\n".join(lines))
    return problems


def self_test():
    """The check itself fails on a cycle, a core-to-application include and an unplaced folder."""
    def tree(files):
        root = tempfile.mkdtemp(prefix="liembs-layers-")
        for relative, text in files.items():
            path = os.path.join(root, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        return root

    clean = tree({"include/liembs/lie/a.hpp": "#include <Eigen/Core>\n",
                  "include/liembs/sim/b.hpp": "#include <liembs/lie/a.hpp>\n",
                  "src/host/c.cpp": "#include <liembs/sim/b.hpp>\n#include <toml++/toml.hpp>\n"})
    assert check(clean) == [], check(clean)
    cyclic = tree({"include/liembs/dynamics/a.hpp": "#include <liembs/plugin/b.hpp>\n",
                   "include/liembs/plugin/b.hpp": "#include <liembs/sim/c.hpp>\n",
                   "include/liembs/sim/c.hpp": "  #  include <liembs/dynamics/a.hpp>\n"})
    problems = check(cyclic)
    assert len(problems) == 1 and "cycle between folders" in problems[0] and "dynamics" in problems[0], problems
    upward = tree({"include/liembs/sim/a.hpp": "#include <liembs/config/config_table.hpp>\n",
                   "src/model/b.cpp": "#include <nlohmann/json.hpp>\n",
                   "include/liembs/config/config_table.hpp": "\n"})
    problems = check(upward)
    assert any("core folder 'sim' includes <liembs/config/config_table.hpp>" in p for p in problems), problems
    assert any("nlohmann/json.hpp>, an application-only dependency" in p for p in problems), problems
    unplaced = tree({"include/liembs/misc/a.hpp": "\n"})
    assert any("folder 'misc' is in neither layer" in p for p in check(unplaced)), check(unplaced)
    page = os.path.join(clean, "architecture.md")
    with open(page, "w", encoding="utf-8") as out:
        out.write("| core | `lie/` | x | — |\n| core | `sim/` | x | lie |\n| application | `host/` | x | lie |\n")
    problems = check_architecture(clean, page)
    assert len(problems) == 1 and "folder 'host' lists includes ['lie'], the code has ['sim']" in problems[0], problems
    print("self-test passed: cycles, upward includes, unplaced folders and a stale folder table are found")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    arguments = sys.argv[1:]
    page = None
    if "--architecture" in arguments:
        at = arguments.index("--architecture")
        page = arguments[at + 1] if at + 1 < len(arguments) else None
        arguments = arguments[:at] + arguments[at + 2:]
    if len(arguments) not in (1, 2) or ("--architecture" in sys.argv and page is None):
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(arguments[0])
    if len(arguments) == 2:
        problems += check_needed(arguments[1])
    if page:
        problems += check_architecture(arguments[0], page)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print("layers: no cycle between folders, the core includes no application code" +
          (" and links the runtime only" if len(arguments) == 2 else "") +
          (f"; {page} shows the measured graph" if page else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
