"""`liembs eval`'s progress line (issue 32 item 6; liembs/util/progress_line.hpp).

On a terminal (a pseudo-terminal here) an evaluation that takes more than a second shows
"N states" redrawn in place and erased before the closing line; with stderr a pipe or a file
there is nothing but the closing line. The states come through a FIFO, written in bursts over
about two and a half seconds, so the evaluation lasts that long whatever the machine's speed
(no time is asserted).
"""
import argparse
import os
import pty
import re
import shutil
import subprocess
import sys
import threading
import time

BURSTS, ROWS_PER_BURST, PAUSE = 8, 500, 0.3


def states(liembs, config):
    listing = subprocess.run([liembs, "eval", config, "--columns"], capture_output=True, text=True, check=True)
    inputs = listing.stdout.splitlines()[0].split()[1:]
    header = ",".join(inputs) + "\n"
    row = ",".join("0.1" for _ in inputs) + "\n"
    return header, row


def evaluate(liembs, config, fifo, output, stderr_kind, scratch):
    """Runs liembs eval on the FIFO, written in bursts; returns (stderr bytes, exit status)."""
    header, row = states(liembs, config)

    def write():
        with open(fifo, "w") as out:  # opens when liembs opens the FIFO
            out.write(header)
            for _ in range(BURSTS):
                out.write(row * ROWS_PER_BURST)
                out.flush()
                time.sleep(PAUSE)

    command = [liembs, "eval", config, "--states", fifo, "--output", output, "--threads", "1"]
    writer = threading.Thread(target=write)
    writer.start()
    if stderr_kind == "terminal":
        master, slave = pty.openpty()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        data = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            data += chunk
        os.close(master)
        status = process.wait()
    elif stderr_kind == "pipe":
        finished = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        data, status = finished.stderr, finished.returncode
    else:
        path = os.path.join(scratch, "stderr.txt")
        with open(path, "wb") as err:
            status = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err).returncode
        with open(path, "rb") as err:
            data = err.read()
    writer.join()
    return data, status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--liembs", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--scratch", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.scratch, ignore_errors=True)
    os.makedirs(args.scratch)
    config = os.path.join(args.source, "configs", "examples", "iiwa-arm.toml")
    fifo = os.path.join(args.scratch, "states.fifo")
    os.mkfifo(fifo)
    rows = BURSTS * ROWS_PER_BURST
    closing = re.compile(rb"liembs eval: %d state\(s\) evaluated" % rows)
    failures = []

    data, status = evaluate(args.liembs, config, fifo, os.path.join(args.scratch, "tty.csv"), "terminal", args.scratch)
    lines = re.findall(rb"\r  (\d+) states", data)
    if status != 0:
        failures.append("terminal: exit status %d: %r" % (status, data))
    if not lines:
        failures.append("terminal: no progress line in %r" % data)
    counts = [int(n) for n in lines]
    if counts != sorted(counts) or any(n > rows for n in counts):
        failures.append("terminal: the counts %r do not grow up to %d" % (counts, rows))
    # The last line is erased (\r, spaces, \r) before the closing line.
    if not re.search(rb"states\r +\rliembs eval: ", data):
        failures.append("terminal: the progress line is not erased before the closing line: %r" % data[-300:])
    if not closing.search(data):
        failures.append("terminal: no closing line in %r" % data[-300:])

    for kind in ("pipe", "file"):
        data, status = evaluate(args.liembs, config, fifo, os.path.join(args.scratch, kind + ".csv"), kind, args.scratch)
        if status != 0 or b"\r" in data or b" states" in data.replace(b" state(s)", b"") or len(data.splitlines()) != 1 \
                or not closing.search(data):
            failures.append("%s: expected the closing line only, got %r (exit status %d)" % (kind, data, status))
    for kind in ("tty", "pipe", "file"):
        with open(os.path.join(args.scratch, kind + ".csv")) as out:
            written = sum(1 for _ in out) - 1
        if written != rows:
            failures.append("%s: %d rows written, not %d" % (kind, written, rows))

    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("progress on a terminal (%d redraws), none into a pipe or a file" % len(lines))


if __name__ == "__main__":
    main()
