"""The small data tables (effort, build names, targets, rule facts) load into typed records, and an
unknown or missing key is an error naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit.estimate import effort
from portkit.core.errors import MappingError
from portkit.core.tables.mappings import tables_dir


def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the shipped table `name` with `old` replaced by `new` (once)."""
    text = (tables_dir() / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_the_cost_model_loads_into_records():
    model = effort.default_model()
    assert isinstance(model.units["validate_kernel"], effort.Unit)
    assert model.units["validate_kernel"].fact == "kernels"
    assert model.units["validate_kernel"].repeat_in_file == 0.5
    ci = model.fixed["ci"]
    assert (ci.fact, ci.when, ci.max) == ("cuda_files", ("cuda-sources", "!extension-build", "!builds-for-amd"),
                                         (1.5, 3.0, 6.0))
    assert model.archetypes[-1] == effort.Archetype("other", model.archetypes[-1].label, (), "nothing to port", True)
    assert model.focus_hours_per_week == 30.0


@pytest.mark.parametrize("old, new, message", [
    ('[unit.validate_kernel]\nhours', '[unit.validate_kernel]\nhourz = 1\nhours',
     "mappings/effort.toml: unit.validate_kernel: unknown key 'hourz'"),
    ('[fixed.ci]\nbase', '[fixed.ci]\nbasis_ = "x"\nbase',
     "mappings/effort.toml: fixed.ci: unknown key 'basis_'"),
    ('focus_hours_per_week = 30', 'focus_hours_per_weak = 30',
     "mappings/effort.toml: [model]: unknown key 'focus_hours_per_weak'"),
    ('per_site = 0.1\n', '',
     "mappings/effort.toml: [model]: missing key 'per_site'"),
    ('[calibration]\nprojects = 15', '[calibration]\nproject = 15',
     "mappings/effort.toml: [calibration]: unknown key 'project'"),
    ('id = "jax"\n', '',
     "mappings/effort.toml: archetype 5: missing key 'id'"),
    ('id = "jax"\n', 'id = "jax"\nfeasable = true\n',
     "mappings/effort.toml: archetype 5: unknown key 'feasable'"),
    ('schema = 1\n', 'schema = 1\n[modle]\n',
     "mappings/effort.toml: unknown key 'modle'"),
])
def test_a_bad_cost_model_is_named(tmp_path, old, new, message):
    with pytest.raises(MappingError) as info:
        effort.load(edited(tmp_path, "effort.toml", old, new))
    assert str(info.value) == message


def test_the_cmake_names_load_from_the_build_table():
    from portkit.buildfiles.cmake import _HANDLERS
    from portkit.buildfiles.table import default_table
    names = default_table().cmake
    assert "ARCHITECTURES" in names.hip_variables
    assert names.toolkit_variables["CUDA_INCLUDE_DIRS"] == "hip_INCLUDE_DIRS"
    assert names.findcuda_commands["cuda_add_library"] == "add_library"
    assert names.results.fullmatch("CUDA_cublas_LIBRARY") and not names.results.fullmatch("CUDA_PTX_FILE")
    assert {c for c, handler in _HANDLERS.items() if handler.__name__ == "findcuda_library"} == set(
        names.findcuda_libraries)


@pytest.mark.parametrize("old, new, message", [
    ('hip_properties = [', 'hip_propertys = [',
     "mappings/build.toml: [cmake]: unknown key 'hip_propertys'"),
    ('[cmake.toolkit_variables]\n', '[cmake.toolkit_variable]\n',
     "mappings/build.toml: [cmake]: unknown key 'toolkit_variable'"),
    ('cuda_add_cufft_to_target = "cufft"', 'cuda_add_cufft_to_target = "cufft_x"',
     "mappings/build.toml: [cmake].findcuda_libraries: cuda_add_cufft_to_target: 'cufft_x' is no [[library]] "
     "link name"),
    ('id = "culibos"\n', 'id = "culibos"\nhip_targt = "x"\n',
     "mappings/build.toml: library 16: unknown key 'hip_targt'"),
    ('action = "translate"\nhip = ["-ffast-math"]', 'action = "translate"\nhipp = ["-ffast-math"]',
     "mappings/build.toml: flag 4: unknown key 'hipp'"),
])
def test_a_bad_build_table_is_named(tmp_path, old, new, message):
    from portkit.buildfiles.table import load
    path = edited(tmp_path, "build.toml", old, new)
    with pytest.raises(MappingError) as info:
        load(path)
    assert str(info.value) == message


def test_the_roc_datatypes_load_and_name_real_cuda_names():
    from portkit.core.tables.mappings import default_db
    from portkit.rewrite.identifiers import roc_datatypes
    table = roc_datatypes()
    assert table["CUDA_R_32F"] == {"cusparse": "rocsparse_datatype_f32_r"}
    assert len(table) == 8
    assert all(name in default_db().names for name in table)


def test_the_hopper_features_load():
    from portkit.rules import PK306_hopper_features as pk306
    assert pk306.FEATURES[b"map_shared_rank"] == ("distributed shared memory", None)
    assert pk306.FEATURES[b"pipeline"] == ("cuda::pipeline", "high")
    assert pk306.NAMES[0] == b"__cluster_dims__" and len(pk306.NAMES) == 13


def test_the_targets_load():
    from portkit.core.tables import targets as gpu_targets
    assert gpu_targets.target("gfx90a:xnack+").lds_bytes == 64 * 1024
    assert gpu_targets.target("gfx950").lds_bytes == 160 * 1024
    assert gpu_targets.target("gfx1100").wavefront == (32, 64)
    assert gpu_targets.target("gfx942").wavefront == (64,)
    assert gpu_targets.lds_bytes(("gfx950",)) == 160 * 1024
    assert gpu_targets.lds_bytes(("gfx950", "gfx942")) == 64 * 1024
    assert gpu_targets.lds_bytes(("gfx950", "gfx1036")) == 64 * 1024   # not listed: the table's smallest


@pytest.mark.parametrize("name, section, cls_of, old, new, message", [
    ("roc_datatypes.toml", "datatype", "portkit.rewrite.identifiers:RocDatatype",
     'roc = "rocsparse_datatype_f32_r"', 'roc = "rocsparse_datatype_f32_r"\nrock = "x"',
     "mappings/roc_datatypes.toml: datatype 1 (CUDA_R_32F): unknown key 'rock'"),
    ("roc_datatypes.toml", "datatype", "portkit.rewrite.identifiers:RocDatatype",
     'cuda = "CUDA_R_64F"', 'cuda = "CUDA_R_32F"',
     "mappings/roc_datatypes.toml: datatype 2 (CUDA_R_32F): duplicate cuda, family"),
    ("hopper_features.toml", "feature", "portkit.rules.PK306_hopper_features:Feature",
     'name = "map_shared_rank"', 'name = "map_shared_rank"\nseverty = "high"',
     "mappings/hopper_features.toml: feature 8 (map_shared_rank): unknown key 'severty'"),
    ("targets.toml", "target", "portkit.core.tables.targets:Target",
     'name = "gfx950"', 'name = "gfx950"\nlds = 1',
     "mappings/targets.toml: target 8 (gfx950): unknown key 'lds'"),
    ("targets.toml", "target", "portkit.core.tables.targets:Target",
     'lds_bytes = 163840', 'lds_bytes = "160 KiB"',
     "mappings/targets.toml: target 8 (gfx950): 'lds_bytes' must be of type int"),
    ("targets.toml", "target", "portkit.core.tables.targets:Target",
     'source = "ROCm docs', 'sources = "ROCm docs',
     "mappings/targets.toml: unknown key 'sources'"),
])
def test_a_bad_fact_table_is_named(tmp_path, name, section, cls_of, old, new, message):
    import importlib

    from portkit.core.tables.records import table
    module, _, cls = cls_of.partition(":")
    with pytest.raises(MappingError) as info:
        table(edited(tmp_path, name, old, new), section, getattr(importlib.import_module(module), cls),
              ("cuda", "family") if section == "datatype" else ("name",))
    assert str(info.value) == message


def test_a_bad_hopper_severity_is_named(tmp_path):
    from portkit.rules import PK306_hopper_features as pk306
    path = edited(tmp_path, "hopper_features.toml", 'what = "cuda::pipeline"\nseverity = "high"',
                  'what = "cuda::pipeline"\nseverity = "urgent"')
    with pytest.raises(MappingError) as info:
        pk306.load(path)
    assert str(info.value) == ("mappings/hopper_features.toml: feature 13 (pipeline): bad severity 'urgent' "
                               "(one of blocker, high, medium, low, info)")


SHARED_96K = b"__global__ void k(float* out) {\n    __shared__ float tile[24 * 1024];\n    out[0] = tile[0];\n}\n"


@pytest.mark.parametrize("targets, flagged", [
    (("gfx90a",), True), (("gfx950",), False), (("gfx950", "gfx942"), True), (("gfx1100",), True)])
def test_pk307_reads_the_smallest_lds_of_the_targets(targets, flagged):
    from portkit import rules
    from portkit.commands.audit import ScanJob, audit_bytes
    from portkit.commands.scan.walk import Options
    options = Options(audit=True, offload_arch=targets)
    scan = audit_bytes("k.cu", SHARED_96K, "source", ScanJob(options, enabled=rules.selected(None, None)))
    found = [(f.line, f.code, f.message) for f in scan.findings if f.code == "PK307"]
    want = (2, "PK307", "__shared__ tile takes 96 KiB; an AMD workgroup has 64 KiB of LDS")
    assert found == ([want] if flagged else [])
