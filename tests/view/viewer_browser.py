#!/usr/bin/python3
"""The viewer's page in a real browser (headless Chromium through Selenium): for runs of a
tree, a URDF arm, a closed loop, a free body in absolute coordinates, paper 004's slider
crank and arms drawn with STL and OBJ meshes (URDF, MJCF), `liembs view` writes the page;
the page loads without a console error, draws a non-empty scene, two screenshots at
different times differ where the bodies moved, playback advances time, the plot follows the
chosen column, each mesh is drawn with all its triangles where its vertices are, and a mesh
three.js cannot read is named on the page. The screenshots stay in the output folder for a
developer to look at.

Usage: viewer_browser.py --liembs BUILD/bin/liembs --source SOURCE_DIR --output FOLDER
"""
import argparse
import csv
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

CASES = [
    # name, config (relative to the source tree), settings
    ("tree-double-pendulum", "configs/examples/double-pendulum.toml", ["simulation.end_time=1.5"]),
    ("urdf-iiwa-arm", "configs/examples/iiwa-arm.toml", ["simulation.end_time=1.0"]),
    ("loop-four-bar", "configs/four-bar/planar.toml", ["simulation.end_time=1.0"]),
    ("absolute-spinning-body", "configs/examples/spinning-body.toml", ["simulation.end_time=2.0"]),
    ("paper-004-slider-crank", "configs/paper-004/slider-crank.toml", ["simulation.end_time=0.5"]),
    ("urdf-mesh-arm", "tests/data/meshes/mesh-arm.toml", []),
    ("mjcf-mesh-arm", "tests/data/meshes/mesh-arm-mjcf.toml", []),
]
# The meshes each body of a case draws: (file, triangles) per mesh shape, in the file's order,
# and the colour of those the file gives one (tests/data/meshes/mesh-arm.urdf: tetrahedra).
MESHES = {
    "urdf-mesh-arm": {
        "arm": [("tetrahedron-binary.stl", 4, None), ("tetrahedron-binary.stl", 4, None)],
        "forearm": [("tetrahedron-ascii.stl", 4, None), ("tetrahedron.obj", 4, "orange")],
        "hand": [],  # its file is missing: the inertia box
    },
    "mjcf-mesh-arm": {  # tests/data/meshes/mesh-arm.xml: the triangles MuJoCo compiled
        "arm": [("stretched", 4, None), ("wedge", 4, None)],
        "hand": [("stretched", 4, None)],
    },
}
BACKGROUND = (0xEE, 0xF1, 0xF5)  # the scene's clear colour (viewer.js)
POSE_COLUMNS = ("x", "y", "z", "qw", "qx", "qy", "qz")


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def requirements():
    missing = []
    for program in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not pathlib.Path(program).exists():
            missing.append(program)
    try:
        import selenium  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as error:
        missing.append(str(error))
    if missing:
        fail("missing " + ", ".join(missing) +
             " (Debian packages chromium, chromium-driver, python3-selenium, python3-pil: scripts/install-deps)")


def liembs(program, *arguments, cwd):
    result = subprocess.run([program, *arguments], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        fail("liembs " + " ".join(arguments) + " exited " + str(result.returncode) + ":\n" + result.stderr)


def browser(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--enable-unsafe-swiftshader",  # WebGL in software, without a GPU
                     "--window-size=1000,800", "--user-data-dir=" + str(profile)):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(60)
    return driver


def console_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def canvas_image(driver, element_id, path):
    from PIL import Image
    element = driver.find_element("id", element_id)
    element.screenshot(str(path))
    return Image.open(path).convert("RGB")


def near(pixel, colour, tolerance=6):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def trajectory_row(file, t):
    """The last row of a trajectory.csv at or before time t, as {column: value}."""
    with open(file, newline="") as stream:
        chosen = None
        for row in csv.DictReader(stream):
            if chosen is not None and float(row["time"]) > t:
                break
            chosen = row
    return {name: float(value) for name, value in chosen.items()}


def check_meshes(driver, name, expected, shot, ratio):
    """Each body draws the meshes it should, every triangle of them, each visible where its
    vertices are on the screenshot (in its colour where the file gives one)."""
    problems = driver.execute_script("return liembsView.meshProblems")
    if problems:
        fail(name + ": meshes not drawn: " + "; ".join(problems))
    for body, meshes in expected.items():
        drawn = driver.execute_script("return liembsView.meshes(arguments[0])", body)
        found = [(mesh["source"], mesh["triangles"]) for mesh in drawn]
        if found != [(source, triangles) for source, triangles, _ in meshes]:
            fail(name + ": body '" + body + "' draws the meshes " + str(found) + ", not " + str(meshes))
        for mesh, (source, _, colour) in zip(drawn, meshes):
            point = (int(mesh["screen"]["x"] * ratio), int(mesh["screen"]["y"] * ratio))
            pixel = shot.getpixel(point)
            if near(pixel, BACKGROUND, 12):
                fail(name + ": mesh " + source + " of body '" + body + "' is not visible at " + str(point))
            if colour == "orange" and not (pixel[0] > pixel[2] + 80 and pixel[0] > pixel[1]):
                fail(name + ": mesh " + source + " of body '" + body + "' is not orange at " + str(point) + ": " +
                     str(pixel))


def check_unreadable_mesh(driver, program, source, output):
    """A mesh file that passes liembs's checks but that three.js cannot read (an ASCII STL
    cut short) is named above the scene and in liembsView.meshProblems, without a console
    error; the link keeps its other mesh."""
    folder = output / "unreadable-mesh"
    shutil.copytree(pathlib.Path(source) / "tests/data/meshes", folder)
    (folder / "tetrahedron-ascii.stl").write_text("solid cut\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n")
    liembs(program, "run", "mesh-arm.toml", "--quiet", "--output", "run", "--set", "simulation.end_time=0.1", cwd=folder)
    liembs(program, "view", "run", "--quiet", cwd=folder)
    driver.get((folder / "run" / "view.html").as_uri())
    for _ in range(600):
        if driver.execute_script("return !!window.liembsView"):
            break
        time.sleep(0.1)
    else:
        fail("unreadable mesh: the page did not start; console: " + str(console_errors(driver)))
    errors = console_errors(driver)
    if errors:
        fail("unreadable mesh: console errors: " + "\n".join(errors))
    problems = driver.execute_script("return liembsView.meshProblems")
    message = driver.find_element("id", "message").text
    if len(problems) != 1 or not problems[0].startswith("mesh tetrahedron-ascii.stl is not drawn") or \
            problems[0] not in message:
        fail("unreadable mesh: not reported: " + str(problems) + " / " + message)
    drawn = [(mesh["source"], mesh["triangles"]) for mesh in driver.execute_script("return liembsView.meshes('forearm')")]
    if drawn != [("tetrahedron-ascii.stl", 0), ("tetrahedron.obj", 4)]:
        fail("unreadable mesh: the forearm draws " + str(drawn))
    print("unreadable mesh: ok (" + problems[0] + ")")


def check_case(driver, name, run, output):
    driver.get((run / "view.html").as_uri())
    for _ in range(600):
        if driver.execute_script("return !!window.liembsView"):
            break
        time.sleep(0.1)
    else:
        fail(name + ": the page did not start (window.liembsView undefined); console: " + str(console_errors(driver)))
    errors = console_errors(driver)
    if errors:
        fail(name + ": console errors on load: " + "\n".join(errors))

    view = driver.execute_script("return {start: liembsView.startTime, end: liembsView.endTime, "
                                 "bodies: liembsView.bodyNames, ratio: window.devicePixelRatio}")
    ratio = view["ratio"]
    times = (view["start"], view["start"] + 0.45 * (view["end"] - view["start"]))
    driver.execute_script("liembsView.pause()")
    shots, positions = [], []
    for label, t in zip(("t0", "t1"), times):
        driver.execute_script("liembsView.showTime(arguments[0])", t)
        time.sleep(0.3)  # a few animation frames
        shots.append(canvas_image(driver, "scene", output / (name + "-" + label + ".png")))
        positions.append({body: driver.execute_script("return liembsView.screenPosition(arguments[0])", body)
                          for body in view["bodies"]})
    first, second = shots
    width, height = first.size
    area = width * height
    if name in MESHES:
        check_meshes(driver, name, MESHES[name], second, ratio)

    # A scene is drawn: more than 1 % of the canvas is not the background.
    drawn = sum(1 for pixel in first.getdata() if not near(pixel, BACKGROUND))
    if drawn < 0.01 * area:
        fail(name + ": the canvas is (nearly) empty: " + str(drawn) + " of " + str(area) + " pixels drawn")

    # The two times differ, and they differ where the bodies are: around each body's frame
    # origin at either time (its shapes and axes are drawn there), for every body whose pose changed.
    changed = [(k % width, k // width) for k, (a, b) in enumerate(zip(first.getdata(), second.getdata()))
               if not near(a, b, 2)]
    if len(changed) < 0.001 * area:
        fail(name + ": the screenshots at t = %g and %g s are the same (%d pixels differ)" % (times[0], times[1], len(changed)))
    if len(changed) > 0.6 * area:
        fail(name + ": %d of %d pixels changed between the screenshots: the camera or the scene moved as a whole"
             % (len(changed), area))
    changed_set = set(changed)
    poses = [trajectory_row(run / "trajectory.csv", t) for t in times]
    moved = 0
    for body in view["bodies"]:
        a, b = positions[0][body], positions[1][body]
        pose_changed = any(abs(poses[0][body + "." + c] - poses[1][body + "." + c]) > 1e-3 for c in POSE_COLUMNS)
        if not pose_changed:
            continue
        moved += 1
        window = 14
        hits = sum(1 for point in (a, b)
                   for dx in range(-window, window + 1) for dy in range(-window, window + 1)
                   if (int(point["x"] * ratio) + dx, int(point["y"] * ratio) + dy) in changed_set)
        if hits == 0:
            fail(name + ": body '" + body + "' moved, but the picture did not change around its frame origin at "
                 + str(a) + " or " + str(b))
    if moved == 0:
        fail(name + ": no body moved between t = %g and %g s; the case shows nothing" % times)

    # Playback: the play button advances time (at 0.1x: 0.1 s in a second), pause stops it.
    driver.execute_script("const s = document.getElementById('speed'); s.value = '0.1';"
                          "s.dispatchEvent(new Event('change'));")
    driver.find_element("id", "play").click()
    time.sleep(1.0)
    driver.find_element("id", "play").click()
    paused_at = driver.execute_script("return liembsView.time()")
    if paused_at == times[1]:  # (a slow browser may have wrapped around the end: any change is progress)
        fail(name + ": playing for 1 s did not advance time from %g" % times[1])
    time.sleep(0.3)
    if driver.execute_script("return liembsView.time()") != paused_at:
        fail(name + ": time moves while paused")

    # Scrubbing: the slider sets the time.
    driver.execute_script("const s = document.getElementById('time-slider'); s.value = arguments[0];"
                          "s.dispatchEvent(new Event('input'));", times[0])
    if abs(driver.execute_script("return liembsView.time()") - times[0]) > 1e-9:
        fail(name + ": the time slider does not set the time")

    # The plot draws the chosen column and names its value at the time shown.
    plot = canvas_image(driver, "plot", output / (name + "-plot.png"))
    blue = sum(1 for pixel in plot.getdata() if near(pixel, (0x1F, 0x5F, 0xA8), 40))
    if blue < 50:
        fail(name + ": the plot has no curve (%d curve pixels)" % blue)
    columns = driver.execute_script("return Array.from(document.getElementById('column').options).map(o => o.value)")
    choice = next((c for c in columns if c.startswith("violation.")), "kinetic_energy")
    driver.execute_script("const s = document.getElementById('column'); s.value = arguments[0];"
                          "s.dispatchEvent(new Event('change'));", choice)
    legend = driver.find_element("id", "plot-legend").text
    if not legend.startswith(choice + " = "):
        fail(name + ": the plot's legend does not follow the chosen column " + choice + ": " + legend)

    driver.execute_script("liembsView.showTime(arguments[0])", times[1])
    time.sleep(0.3)
    driver.save_screenshot(str(output / (name + "-page.png")))  # docs/figures/viewer/ has the arm's
    errors = console_errors(driver)
    if errors:
        fail(name + ": console errors: " + "\n".join(errors))
    print("%s: ok (%d of %d pixels drawn, %d changed between t = %g and %g s, %d bodies moved)"
          % (name, drawn, area, len(changed), times[0], times[1], moved))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--liembs", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--output", required=True, help="folder for the runs, pages and screenshots")
    arguments = parser.parse_args()
    requirements()
    program = str(pathlib.Path(arguments.liembs).resolve())
    output = pathlib.Path(arguments.output).resolve()
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)

    runs = []
    for name, config, settings in CASES:
        run = output / name
        sets = [word for setting in settings for word in ("--set", setting)]
        liembs(program, "run", config, "--quiet", "--output", str(run), *sets, cwd=arguments.source)
        liembs(program, "view", str(run), "--quiet", cwd=output)  # from another folder than the run's
        runs.append((name, run))

    with tempfile.TemporaryDirectory(prefix="liembs-viewer-browser-") as profile:
        driver = browser(profile)
        try:
            for name, run in runs:
                check_case(driver, name, run, output)
            check_unreadable_mesh(driver, program, arguments.source, output)
        finally:
            driver.quit()
    print("screenshots in " + str(output))


if __name__ == "__main__":
    main()
