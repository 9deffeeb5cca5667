"""The measurement report's lines from the Python drivers, as Tests/TestSupport/MeasurementReport.swift
writes them: a figure a loaded machine bends, one tab-separated line (test, figure, value, unit,
gross budget, verdict) appended to the file DESKAUDIO_REPORT names."""
import os


def record(test, figure, value, unit, at_most, judged=True):
    """Writes `figure` and returns whether it is within its gross budget `at_most` (always
    true when not `judged`: a figure of another program's, recorded beside ours)."""
    within = value <= at_most or not judged
    verdict = "not judged" if not judged else "within" if within else "PAST BUDGET"
    line = "\t".join([test, figure, f"{value:.4g}", unit, f"<= {at_most}", verdict])
    path = os.environ.get("DESKAUDIO_REPORT")
    if path:
        with open(path, "a") as report:
            report.write(line + "\n")
    return within
