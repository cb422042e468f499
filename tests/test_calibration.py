"""The calibration on real ports (benchmarks/calibration): a model change must not make it worse."""

import json
import tomllib
from pathlib import Path

import pytest

from portkit.estimate import calibration, effort

HERE = Path(__file__).resolve().parents[1] / "benchmarks" / "calibration"
TABLE = tomllib.loads((HERE / "projects.toml").read_text(encoding="utf-8"))
PROJECTS = {p["name"]: p for p in TABLE["project"]}


def _p50(name: str) -> float:
    return calibration.estimate(json.loads((HERE / "facts" / f"{name}.json").read_text())).hours["p50"]


def test_the_set_has_at_least_eight_projects_each_with_its_facts():
    assert len(PROJECTS) >= 8
    assert sorted(p.stem for p in (HERE / "facts").glob("*.json")) == sorted(PROJECTS)


def test_at_least_four_projects_are_held_out_of_the_tuning():
    assert sum(bool(p.get("held_out")) for p in PROJECTS.values()) >= 4


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_each_estimate_stays_in_its_recorded_band(name):
    recorded = PROJECTS[name]["measured"]["p50"]
    band = TABLE["calibration"]["band"]
    assert recorded / band <= _p50(name) <= recorded * band


def test_rank_correlation_is_not_worse_than_recorded():
    names = sorted(PROJECTS)
    rho = calibration.spearman([_p50(n) for n in names], [PROJECTS[n]["measured"]["manual_lines"] for n in names])
    assert rho >= TABLE["calibration"]["spearman"]


def test_recorded_scores_are_the_ones_the_recorded_figures_give():
    names = sorted(PROJECTS)
    hours = [PROJECTS[n]["measured"]["p50"] for n in names]
    lines = [PROJECTS[n]["measured"]["manual_lines"] for n in names]
    assert calibration.spearman(hours, lines) == TABLE["calibration"]["spearman"]
    assert calibration.fit(hours, lines) == (TABLE["calibration"]["hours_per_line"], TABLE["calibration"]["error_factor"])


def test_recorded_held_out_and_in_sample_scores_are_recomputed_from_the_facts():
    """Every score of [calibration], the held-out ones included, is what the facts give with the
    current model (exact to 2 decimals): a model change cannot move them silently. After a
    deliberate change, `python benchmarks/calibration/run.py --scores` prints the new ones."""
    names = list(PROJECTS)
    got = calibration.scores([_p50(n) for n in names], [PROJECTS[n]["measured"]["manual_lines"] for n in names],
                             [bool(PROJECTS[n].get("held_out")) for n in names])
    assert got == {k: TABLE["calibration"][k] for k in got}
    assert set(got) == set(TABLE["calibration"]) - {"band"}


def test_leave_one_out_fits_without_the_project_it_scores():
    assert calibration.leave_one_out([1, 2, 4], [1, 2, 4]) == ([1.0, 1.0, 1.0], 1.0)
    # the third is 8x off a fit of the first two; each of those is off the fit of the other and the third
    assert calibration.leave_one_out([1, 1, 8], [1, 1, 1]) == ([2.83, 2.83, 8.0], 2.83)
    assert calibration.fit([1, 1, 8], [1, 1, 1]) == (1.0, 1.0)   # in-sample hides it


def test_transfer_scores_the_test_projects_on_the_training_fit_only():
    assert calibration.transfer(([2, 4], [1, 2]), ([2, 8], [1, 1])) == ([1.0, 4.0], 2.0)


def test_the_cost_model_carries_the_calibration_the_table_records():
    assert effort.default_model().calibration == effort.Calibration(
        projects=len(PROJECTS), spearman=TABLE["calibration"]["spearman"],
        error_factor=TABLE["calibration"]["error_factor"],
        heldout_error_factor=TABLE["calibration"]["heldout_error_factor"], source="docs/estimate.md (Calibration)")


def test_a_300_line_program_with_little_manual_work_is_hours_not_weeks():
    assert _p50("mini-nbody") < 8


def test_spearman_ranks_ties_and_order():
    assert calibration.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert calibration.spearman([1, 2, 3, 4], [40, 30, 20, 10]) == -1.0
    assert calibration.spearman([1, 1, 2, 3], [5, 6, 7, 8]) == 0.949


def test_snapshot_round_trip_keeps_what_the_model_reads():
    data = json.loads((HERE / "facts" / "llm.c.json").read_text())
    files, findings, found = calibration.restore(data)
    assert calibration.snapshot(files, findings, found) == data


def test_the_audit_json_states_the_calibration_error():
    from portkit.api import audit_paths
    doc = audit_paths([Path(__file__).resolve().parents[1] / "fixtures" / "sample_project"])
    assert doc["estimate"]["confidence"]["calibration"] == {
        "projects": 15, "spearman": 0.8, "error_factor": 2.06, "heldout_error_factor": 2.14,
        "source": "docs/estimate.md (Calibration)"}


def test_a_snapshot_prices_what_the_audit_it_was_taken_from_priced(tmp_path: Path):
    """benchmarks/calibration/run.py stops when the snapshot's estimate differs from the audit's.
    A parallel AMD file (csrc/ops.hip beside csrc/ops.cu) must be AMD code after the round trip too."""
    from portkit.commands.audit import audit_paths
    from portkit.commands.results import AuditOptions
    kernel = "__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n"
    files = {"csrc/ops.cu": "#include <mma.h>\n" + kernel,
             "csrc/ops.hip": "#include <hip/hip_runtime.h>\n" + kernel + "__global__ void k2(float *o) { o[0] = 2.0f; }\n",
             "csrc/main.cu": kernel.replace("k(", "m(")}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = audit_paths([tmp_path], AuditOptions())
    facts = calibration.snapshot([(s.rel, s.metrics) for s in result.scans], result.findings, result.scope)
    assert calibration.estimate(facts).hours == result.estimate.hours


HISTORIES = tomllib.loads((HERE / "histories.toml").read_text(encoding="utf-8"))["project"]


def test_squashed_histories_take_their_days_from_the_unsquashed_ports_lines_per_day():
    """The rate is the median manual lines per commit day of the seven unsquashed ports (a squashed
    one's single day would make its rate its whole port); faiss's 2662 lines are 37.9 days."""
    assert calibration.lines_per_day(HISTORIES) == (70.3, 64.0, 403.4)
    changed = [dict(p, measured={**p["measured"], "manual_lines": 10 ** 6}) if p.get("squashed") else p
               for p in HISTORIES]
    assert calibration.lines_per_day(changed) == (70.3, 64.0, 403.4)
    by_name = {p["name"]: p for p in HISTORIES}
    assert calibration.measured_weeks(by_name["xformers"], 70.3) == 28.8    # 144 commit days / 5
    assert calibration.measured_weeks(by_name["faiss"], 70.3) == 7.57       # 2662 / 70.3 / 5
    assert calibration.measured_weeks(by_name["rccl"], 70.3) == 11.44       # 4022 lines beat its 7 days


def test_the_scale_of_a_held_out_project_is_fitted_on_the_others_only():
    estimates = [{"p10": 1.0, "p50": 2.0, "p90": 4.0}] * 4
    measured = [1.0, 2.0, 4.0, 100.0]
    out = calibration.scale_leave_one_out(estimates, measured)
    assert [r["scale"] for r in out] == [2.0, 2.0, 1.0, 1.0]   # medians of the other three ratios
    assert out[0] == {"scale": 2.0, "p10": 2.0, "p50": 4.0, "p90": 8.0, "error_factor": 4.0, "inside": False}
    assert out[2]["error_factor"] == 2.0 and out[2]["inside"] is True
    again = calibration.scale_leave_one_out(estimates, measured[:3] + [1.0])
    assert again[3]["scale"] == out[3]["scale"]   # its own measure never enters its scale


def test_the_leave_one_out_section_is_what_the_script_writes_from_the_kept_headlines():
    import sys
    sys.path.insert(0, str(HERE))
    import leave_one_out
    kept = json.loads((HERE.parent / "results" / "calibration_whole_trees.json").read_text())["histories"]
    assert len(kept["trees"]) >= 10
    text = (HERE.parent / "results" / "calibration_whole_trees.md").read_text()
    assert "\n".join(leave_one_out.section(kept)) in text
