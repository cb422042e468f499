"""The effort estimate: the cost model, the work items, the calibration."""
