"""The measurement report's lines from the Python drivers, as Tests/TestSupport/MeasurementReport.swift
writes them: a figure a loaded machine bends, one tab-separated line (test, figure, value, unit,
gross budget, verdict) appended to the file DESKAUDIO_REPORT names."""
import os


def record(test, figure, value, unit, at_most):
    """Writes `figure` and returns whether it is within its gross budget `at_most`."""
    within = value <= at_most
    line = "\t".join([test, figure, f"{value:.4g}", unit, f"<= {at_most}", "within" if within else "PAST BUDGET"])
    path = os.environ.get("DESKAUDIO_REPORT")
    if path:
        with open(path, "a") as report:
            report.write(line + "\n")
    return within
