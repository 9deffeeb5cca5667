import Foundation
import TestSupport
import Testing

/// The measurement lane's report: a figure within its gross budget passes, one past it fails,
/// one not judged passes; each is one line of the file DESKAUDIO_REPORT names.
@Suite struct MeasurementReportTests {
    @Test func aFigureFailsOnlyPastItsGrossBudget() {
        #expect(MeasurementReport.Budget.atMost(5).admits(5))
        #expect(!MeasurementReport.Budget.atMost(5).admits(5.01))
        #expect(MeasurementReport.Budget.atLeast(0.99).admits(1))
        #expect(!MeasurementReport.Budget.atLeast(0.99).admits(0.5))
        #expect(MeasurementReport.record("gaps", 3, unit: "%", budget: .atMost(5), test: "t", reportPath: nil))
        #expect(!MeasurementReport.record("gaps", 6, unit: "%", budget: .atMost(5), test: "t", reportPath: nil))
        #expect(MeasurementReport.record("gaps", 6, unit: "%", budget: .atMost(5), test: "t", judged: false, reportPath: nil))
    }
}
