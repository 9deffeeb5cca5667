"""The browser tests' verdicts: a check fails the run; a figure a loaded machine bends is
measured into the report (report.py) and fails only past its gross budget."""
from report import record

failures = []


def check(condition, text):
    print(("ok    " if condition else "FAIL  ") + text, flush=True)
    if not condition:
        failures.append(text)


def measure(figure, value, unit, at_most, text=""):
    """A figure a loaded machine bends: into the measurement report (report.py), failed only past
    its gross budget `at_most`, stated at the call."""
    check(record("browser_test.py", figure, value, unit, at_most), f"{figure}: {value:.1f} {unit} (gross budget {at_most}) {text}")
