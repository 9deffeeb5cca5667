"""The verdicts of the Python drivers (browser_test.py, webrtc_test.py): a check fails the run;
a figure a loaded machine bends is measured into the report (report.py) under the driver's
name and fails only past its gross budget."""
import os
import sys

from report import record

failures = []


def check(condition, text):
    print(("ok    " if condition else "FAIL  ") + text, flush=True)
    if not condition:
        failures.append(text)


def measure(figure, value, unit, at_most, text="", digits=".1f"):
    """A figure a loaded machine bends: into the measurement report (report.py), failed only past
    its gross budget `at_most`, stated at the call; shown with `digits`."""
    check(record(os.path.basename(sys.argv[0]), figure, value, unit, at_most),
          f"{figure}: {value:{digits}} {unit} (gross budget {at_most}) {text}")
