"""--launch-syntax hip: launches written as hipify-clang's --hip-kernel-execution-syntax writes them,
and the launches kept as <<<...>>> with the exact PK006 that says why."""

from __future__ import annotations

from pathlib import Path

from portkit.api import convert_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "convert"
KEPT = "kernel launch kept as <<<...>>>: "
STATEMENT = ", and hipLaunchKernelGGL is a statement (do { ... } while (0))"
KERNELS = b"__global__ void k(float *p) {}\ntemplate <typename T> __global__ void t(T *p) {}\n"


def hip(body: bytes) -> tuple[bytes, list[tuple[str, int, int, str]]]:
    """Convert KERNELS + body with --launch-syntax hip: the body's lines out, and the findings."""
    out = convert_text(KERNELS + body, launch_syntax="hip", rocm="5.2")
    lines = out.output.split(b"\n", 4)[4]   # after the runtime header (a line break, the include) and the two kernels
    return lines, [(f.code, f.line, f.column, f.message) for f in out.findings]


def test_grid_and_block_are_wrapped_unless_their_text_starts_with_dim3():
    """hipify-clang compares the text with `dim3(`, not the type: a dim3 variable is wrapped too."""
    out, found = hip(b"void f(float *p, int n) {\n  dim3 g(2);\n  k<<<g, dim3(n)>>>(p);\n"
                     b"  k<<<dim3 (1), 64>>>(p);\n}\n")
    assert out == (b"void f(float *p, int n) {\n  dim3 g(2);\n  hipLaunchKernelGGL(k, dim3(g), dim3(n), 0, 0, p);\n"
                   b"  hipLaunchKernelGGL(k, dim3(dim3 (1)), dim3(64), 0, 0, p);\n}\n")
    assert found == []


def test_brace_dim3_configuration_compiles_inside_the_macro():
    """dim3{1, 1} unwrapped would split hipLaunchKernelGGL's arguments at its comma."""
    out, _ = hip(b"void f(float *p) { k<<<dim3{1, 1}, dim3{32, 1, 1}>>>(p); }\n")
    assert out == b"void f(float *p) { hipLaunchKernelGGL(k, dim3(dim3{1, 1}), dim3(dim3{32, 1, 1}), 0, 0, p); }\n"


def test_template_kernels_get_HIP_KERNEL_NAME_deduced_or_explicit():
    out, _ = hip(b"void f(float *p) {\n  t<<<1, 1>>>(p);\n  t<float><<<1, 1, 8>>>(p);\n}\n")
    assert out == (b"void f(float *p) {\n  hipLaunchKernelGGL(HIP_KERNEL_NAME(t), dim3(1), dim3(1), 0, 0, p);\n"
                   b"  hipLaunchKernelGGL(HIP_KERNEL_NAME(t<float>), dim3(1), dim3(1), 8, 0, p);\n}\n")


def test_gaps_are_joined_and_block_comments_kept():
    out, _ = hip(b"void f(float *p) {\n  k <<< 1 ,\n     2 /*b*/ , 0 >>> (\n    /*a*/ p );\n}\n")
    assert out == b"void f(float *p) {\n  hipLaunchKernelGGL(k, dim3(1), dim3(2), /*b*/ 0, 0, /*a*/ p);\n}\n"


def test_a_line_comment_in_a_gap_keeps_the_launch():
    out, found = hip(b"void f(float *p) {\n  k<<<1, 2>>>( // p\n    p);\n}\n")
    assert out == b"void f(float *p) {\n  k<<<1, 2>>>( // p\n    p);\n}\n"
    assert found == [("PK006", 4, 4, KEPT + "a // comment sits between its pieces, which one line cannot hold")]


def test_pointers_members_and_expressions_are_kept_and_reported():
    src = (b"struct S { void (*run)(float *); };\n"
           b"void f(float *p, void (*kp)(float *), S s) {\n"
           b"  kp<<<1, 1>>>(p);\n  (*kp)<<<1, 1>>>(p);\n  s.run<<<1, 1>>>(p);\n"
           b"  int x = (k<<<1, 1>>>(p), 0);\n}\n")
    out, found = hip(src)
    assert out == src
    pointer = KEPT + "it launches through a pointer or member, which hipify-clang leaves as it is"
    assert found == [
        ("PK006", 5, 5, KEPT + "kp is a variable here (a pointer to the kernel), which hipify-clang leaves as it is"),
        ("PK006", 6, 8, pointer), ("PK006", 7, 8, pointer),
        ("PK006", 8, 13, KEPT + "it is used as an expression" + STATEMENT),
    ]


def test_macro_bodies_and_statement_macro_arguments_are_rewritten():
    src = (b"#define L(kern, n, ...) kern<<<n, 64>>>(__VA_ARGS__)\n"
           b"#define SYNCED(...) do { __VA_ARGS__; sync(); } while (0)\n"
           b"#define SHOWN(...) do { puts(#__VA_ARGS__); __VA_ARGS__; } while (0)\n"
           b"void f(float *p) {\n  SYNCED(k<<<1, 2>>>(p));\n  SHOWN(k<<<1, 2>>>(p));\n}\n")
    out, found = hip(src)
    assert out == (b"#define L(kern, n, ...) hipLaunchKernelGGL(kern, dim3(n), dim3(64), 0, 0, __VA_ARGS__)\n"
                   b"#define SYNCED(...) do { __VA_ARGS__; sync(); } while (0)\n"
                   b"#define SHOWN(...) do { puts(#__VA_ARGS__); __VA_ARGS__; } while (0)\n"
                   b"void f(float *p) {\n  SYNCED(hipLaunchKernelGGL(k, dim3(1), dim3(2), 0, 0, p));\n"
                   b"  SHOWN(k<<<1, 2>>>(p));\n}\n")
    assert found == [("PK006", 8, 10, KEPT + "it is an argument of SHOWN, not a statement" + STATEMENT)]


def test_fixture_findings_are_exact():
    """The golden fixtures' kept launches, each with its reason."""
    forms = convert_text((FIXTURES / "launch_hip_forms" / "input.cu").read_bytes(), launch_syntax="hip", rocm="5.2")
    pointer = KEPT + "it launches through a pointer or member, which hipify-clang leaves as it is"
    assert [(f.code, f.line, f.column, f.message) for f in forms.findings] == [
        ("PK006", 35, 17, KEPT + "it is used as an expression" + STATEMENT),
        ("PK006", 52, 7, KEPT + "kp is a variable here (a pointer to the kernel), which hipify-clang leaves as it is"),
        ("PK006", 53, 10, pointer), ("PK006", 54, 12, pointer)]
    macros = convert_text((FIXTURES / "launch_hip_macros" / "input.cu").read_bytes(), launch_syntax="hip", rocm="5.2")
    assert [(f.code, f.line, f.column, f.message) for f in macros.findings] == [
        ("PK006", 40, 15, KEPT + "it is an argument of TRACED, not a statement" + STATEMENT),
        ("PK006", 42, 8, KEPT + "its configuration could not be read")]
